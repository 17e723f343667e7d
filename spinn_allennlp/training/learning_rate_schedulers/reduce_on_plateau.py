import logging
from typing import Any, Dict, List, Optional, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.training.learning_rate_schedulers import LearningRateScheduler

from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules

logger = logging.getLogger(__name__)


@LearningRateScheduler.register("reduce_on_plateau", exist_ok=True)
class ReduceOnPlateau(LearningRateScheduler):
    """Multiplies the learning rate by `factor` when the validation metric has not improved for
    `patience` epochs: PyTorch's `ReduceLROnPlateau`, as AllenNLP's own `"reduce_on_plateau"`.

    AllenNLP 2.10's scheduler of that name passes `verbose=` to PyTorch, which torch >= 2.7
    rejects (`unexpected keyword argument 'verbose'`), so every config that uses it (all the
    pair-classification configs of allennlp-models) fails at start. Importing this plugin
    registers this class under the same name in its place: such configs run unchanged. It
    accepts the same keys; `verbose` is accepted and ignored (the trainer logs the learning
    rate anyway).

    Set `mode` to `"max"` when the trainer's `validation_metric` starts with `+` (accuracy),
    `"min"` for a loss, as with AllenNLP's.

    Registered as a `LearningRateScheduler` with name "reduce_on_plateau" (replacing
    AllenNLP's).

    # Parameters

    optimizer : `torch.optim.Optimizer`
        Given by the trainer.
    mode : `str`, optional (default = `"min"`)
    factor : `float`, optional (default = `0.1`)
    patience : `int`, optional (default = `10`)
        Epochs without improvement before the rate is reduced.
    verbose : `bool`, optional (default = `False`)
        Ignored (kept so that configs written for AllenNLP's scheduler load).
    threshold_mode : `str`, optional (default = `"rel"`)
    threshold : `float`, optional (default = `1e-4`)
    cooldown : `int`, optional (default = `0`)
    min_lr : `Union[float, List[float]]`, optional (default = `0`)
    eps : `float`, optional (default = `1e-8`)
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        verbose: bool = False,
        threshold_mode: str = "rel",
        threshold: float = 1e-4,
        cooldown: int = 0,
        min_lr: Union[float, List[float]] = 0,
        eps: float = 1e-8,
    ) -> None:
        if mode not in ("min", "max"):
            raise ConfigurationError(
                f'reduce_on_plateau: mode must be "min" or "max", not {mode!r}'
            )
        if threshold_mode not in ("rel", "abs"):
            raise ConfigurationError(
                f'reduce_on_plateau: threshold_mode must be "rel" or "abs", not {threshold_mode!r}'
            )
        lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer=optimizer,
            mode=mode,  # type: ignore[arg-type]
            factor=factor,
            patience=patience,
            threshold_mode=threshold_mode,  # type: ignore[arg-type]
            threshold=threshold,
            cooldown=cooldown,
            min_lr=min_lr,
            eps=eps,
        )
        # Not LearningRateScheduler.__init__: PyTorch's scheduler owns the learning rates.
        self.lr_scheduler = lr_scheduler

    def get_values(self):
        return self.lr_scheduler.get_last_lr()

    def step(self, metric: Optional[float] = None) -> None:
        with configuration_errors():
            rules.check_validation_metric(metric is not None)
        assert metric is not None
        groups = self.lr_scheduler.optimizer.param_groups
        before = [group["lr"] for group in groups]
        self.lr_scheduler.step(metric)
        after = [group["lr"] for group in groups]
        if after != before:
            logger.info("reduce_on_plateau: learning rate %s -> %s", before, after)

    def step_batch(self, batch_num_total: Optional[int] = None) -> None:
        pass  # the schedule moves once per epoch

    def state_dict(self) -> Dict[str, Any]:
        return self.lr_scheduler.state_dict()

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.lr_scheduler.load_state_dict(state_dict)
