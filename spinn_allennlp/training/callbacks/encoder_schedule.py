from typing import Any, Dict, List

from allennlp.common.checks import ConfigurationError

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.settings_errors import configuration_errors
from spinn_allennlp.training.callbacks.training_batch_callback import TrainingBatchCallback
from spinn_core import rules


class EncoderSchedule(TrainingBatchCallback):
    """Sets one setting of every `spinn` encoder with a parser (an attribute, or a setting of its
    policies: `set_on`) before each training batch, to `value(batches_completed)`: held for
    `hold_batches`, then moved over `ramp_batches` (subclasses say how), and reported in the
    batch's metrics under the setting's name.

    The batch count is saved with the trainer's checkpoints, so `--recover` resumes the
    schedule where it was."""

    # The setting scheduled: its name in the batch metrics.
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

    def applies_to(self, encoder: SpinnEncoder) -> bool:
        """Whether the encoder has the setting (checked when training starts)."""
        return True

    def set_on(self, encoder: SpinnEncoder, value: float) -> None:
        """Sets the value: by default the encoder attribute named `attribute`; a schedule of
        a policy's setting says where it goes."""
        setattr(encoder, self.attribute, value)

    # What `applies_to` asks of an encoder, for the error when no encoder has it.
    needs: str = ""

    def progress(self, batches_completed: int) -> float:
        """How far along the ramp the batch after `batches_completed` is, in [0, 1]."""
        done = batches_completed - self.hold_batches
        if done < 0:
            return 0.0
        if done >= self.ramp_batches:
            return 1.0
        return done / self.ramp_batches

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        with_parser = [
            m for m in trainer.model.modules() if isinstance(m, SpinnEncoder) and m.has_parser
        ]
        self._encoders = [encoder for encoder in with_parser if self.applies_to(encoder)]
        with configuration_errors():
            rules.check_encoder_schedule(
                type(self).__name__, len(with_parser), len(self._encoders), self.needs
            )
        self._apply()

    def on_training_batch(self, trainer, batch_number: int, batch_metrics: Dict[str, Any]) -> None:
        self.batches_completed += 1
        self._apply()
        batch_metrics[self.attribute] = self.value(self.batches_completed)

    def _apply(self) -> None:
        value = self.value(self.batches_completed)
        for encoder in self._encoders:
            self.set_on(encoder, value)

    def state_dict(self) -> Dict[str, Any]:
        return {"batches_completed": self.batches_completed}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.batches_completed = state_dict["batches_completed"]
