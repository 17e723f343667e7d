from typing import Any, Dict, List, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder


@TrainerCallback.register("self_transition_schedule")
class SelfTransitionSchedule(TrainerCallback):
    """Moves a SPINN parser from teacher forcing to its own predictions during training
    (NSHRDLU Model 2 with the interpolation its footnote suggests, as in scheduled sampling):
    every `spinn` encoder's `self_transition_prob` — the chance per step of following its own
    prediction instead of the gold transition — stays at `start` for `hold_batches` training
    batches, then rises linearly to `end` over `ramp_batches` batches and stays there.

    The batch count is saved with the trainer's checkpoints, so `--recover` resumes the
    schedule where it was.

    Registered as a `TrainerCallback` with name "self_transition_schedule".

    # Parameters

    serialization_dir : `str`
        Given by the trainer.
    start : `float`, optional (default = `0.0`)
        0 is teacher forcing (Model 1).
    end : `float`, optional (default = `1.0`)
        1 is the model's own predictions only (Model 2).
    hold_batches : `int`, optional (default = `0`)
    ramp_batches : `int`, optional (default = `1000`)
        0 jumps from `start` to `end` after `hold_batches`.
    """

    def __init__(
        self,
        serialization_dir: str,
        start: float = 0.0,
        end: float = 1.0,
        hold_batches: int = 0,
        ramp_batches: int = 1000,
    ) -> None:
        super().__init__(serialization_dir)
        for name, value in (("start", start), ("end", end)):
            if not 0.0 <= value <= 1.0:
                raise ConfigurationError(f"{name} must be in [0, 1], got {value}")
        if hold_batches < 0 or ramp_batches < 0:
            raise ConfigurationError("hold_batches and ramp_batches must not be negative")
        self.start = start
        self.end = end
        self.hold_batches = hold_batches
        self.ramp_batches = ramp_batches
        self.batches_completed = 0
        self._encoders: List[SpinnEncoder] = []

    def probability(self, batches_completed: int) -> float:
        """`self_transition_prob` for the batch after `batches_completed` training batches."""
        progress = batches_completed - self.hold_batches
        if progress < 0:
            return self.start
        if progress >= self.ramp_batches:
            return self.end
        return self.start + (self.end - self.start) * progress / self.ramp_batches

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        self._encoders = [m for m in trainer.model.modules() if isinstance(m, SpinnEncoder)]
        if not any(encoder.has_parser for encoder in self._encoders):
            raise ConfigurationError(
                "self_transition_schedule needs a spinn encoder with predict_transitions"
            )
        self._apply()

    def on_batch(
        self,
        trainer,
        batch_inputs: List[Dict[str, Any]],
        batch_outputs: List[Dict[str, Any]],
        batch_metrics: Dict[str, Any],
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        batch_grad_norm: Optional[float] = None,
        **kwargs,
    ) -> None:
        if is_training:
            self.batches_completed += 1
            self._apply()
            batch_metrics["self_transition_prob"] = self.probability(self.batches_completed)

    def _apply(self) -> None:
        value = self.probability(self.batches_completed)
        for encoder in self._encoders:
            if encoder.has_parser:
                encoder.self_transition_prob = value

    def state_dict(self) -> Dict[str, Any]:
        return {"batches_completed": self.batches_completed}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.batches_completed = state_dict["batches_completed"]
