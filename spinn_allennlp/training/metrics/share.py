from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics import Metric


@Metric.register("share")
class Share(Metric):
    """Hits over trials, summed over batches (and over workers in distributed training); hits
    may be fractional (a sum of per-sentence scores).

    Call it once per batch with that batch's counts. AllenNLP's `Average` all-reduces on every
    call, so calling it once per sentence made workers with different batch sizes issue
    different collectives (a gloo "collective mismatch" crash in two-worker training).

    Registered as a `Metric` with name "share".
    """

    def __init__(self) -> None:
        self._hits: float = 0
        self._trials = 0

    def __call__(self, hits: float, trials: int) -> None:  # type: ignore[override]
        self._hits += dist_reduce_sum(hits)
        self._trials += dist_reduce_sum(trials)

    @property
    def measured(self) -> bool:
        """Whether any trial was counted (a share of nothing is not 0: it is not measured)."""
        return self._trials > 0

    def get_metric(self, reset: bool = False) -> float:
        value = self._hits / self._trials if self._trials else 0.0
        if reset:
            self.reset()
        return float(value)

    def reset(self) -> None:
        self._hits = 0.0
        self._trials = 0
