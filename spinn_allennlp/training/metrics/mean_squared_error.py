from typing import Optional

import torch
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics import Metric


@Metric.register("mean_squared_error")
class MeanSquaredError(Metric):
    """The mean of (prediction - gold)^2 over every value seen since the last reset, summed
    over batches and distributed workers.

    Registered as a `Metric` with name "mean_squared_error".
    """

    def __init__(self) -> None:
        self._squared_error = 0.0
        self._count = 0

    @torch.no_grad()
    def __call__(
        self,
        predictions: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: Optional[torch.BoolTensor] = None,
    ) -> None:
        errors = (predictions.double() - gold_labels.double()) ** 2
        if mask is not None:
            errors = errors[mask.bool()]
        self._squared_error += float(dist_reduce_sum(errors.sum()).item())
        self._count += int(dist_reduce_sum(torch.tensor(errors.numel())).item())

    def get_metric(self, reset: bool = False) -> float:
        value = self._squared_error / self._count if self._count else 0.0
        if reset:
            self.reset()
        return float(value)

    def reset(self) -> None:
        self._squared_error = 0.0
        self._count = 0
