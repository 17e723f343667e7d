from typing import Any, Dict, List, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder


class EncoderSchedule(TrainerCallback):
    """Sets one attribute of every `spinn` encoder with a parser before each training batch,
    to `value(batches_completed)`: held for `hold_batches`, then moved over `ramp_batches`
    (subclasses say how), and reported in the batch's metrics under the attribute's name.

    The batch count is saved with the trainer's checkpoints, so `--recover` resumes the
    schedule where it was."""

    # The encoder attribute set.
    attribute: str

    def __init__(self, serialization_dir: str, hold_batches: int, ramp_batches: int) -> None:
        super().__init__(serialization_dir)
        if hold_batches < 0 or ramp_batches < 0:
            raise ConfigurationError("hold_batches and ramp_batches must not be negative")
        self.hold_batches = hold_batches
        self.ramp_batches = ramp_batches
        self.batches_completed = 0
        self._encoders: List[SpinnEncoder] = []

    def value(self, batches_completed: int) -> float:
        raise NotImplementedError

    def progress(self, batches_completed: int) -> float:
        """How far along the ramp the batch after `batches_completed` is, in [0, 1]."""
        done = batches_completed - self.hold_batches
        if done < 0:
            return 0.0
        if done >= self.ramp_batches:
            return 1.0
        return done / self.ramp_batches

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        self._encoders = [
            m for m in trainer.model.modules() if isinstance(m, SpinnEncoder) and m.has_parser
        ]
        if not self._encoders:
            name = type(self).__name__
            raise ConfigurationError(f"{name} needs a spinn encoder with predict_transitions")
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
            batch_metrics[self.attribute] = self.value(self.batches_completed)

    def _apply(self) -> None:
        value = self.value(self.batches_completed)
        for encoder in self._encoders:
            setattr(encoder, self.attribute, value)

    def state_dict(self) -> Dict[str, Any]:
        return {"batches_completed": self.batches_completed}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.batches_completed = state_dict["batches_completed"]
