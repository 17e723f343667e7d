from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.training.callbacks.encoder_schedule import EncoderSchedule
from spinn_core.policies import Given, Mixed


@TrainerCallback.register("self_transition_schedule")
class SelfTransitionSchedule(EncoderSchedule):
    """Moves a SPINN parser from teacher forcing to its own predictions during training
    (NSHRDLU Model 2 with the interpolation its footnote suggests, as in scheduled sampling):
    every `spinn` encoder's training policy follows the given transitions while the chance per
    step of following its own prediction instead (`self_transition_prob`) is 0, and is
    `{"type": "mixed", "self_transition_prob": p}` once it is above: p stays at `start` for
    `hold_batches` training batches, then rises linearly to `end` over `ramp_batches` batches
    and stays there. The encoder's training policy must be `"given"` (the default) or
    `"mixed"`.

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

    attribute = "self_transition_prob"
    needs = 'a spinn encoder whose training_policy is "given" or "mixed"'

    def __init__(
        self,
        serialization_dir: str,
        start: float = 0.0,
        end: float = 1.0,
        hold_batches: int = 0,
        ramp_batches: int = 1000,
    ) -> None:
        super().__init__(serialization_dir, hold_batches, ramp_batches)
        for name, value in (("start", start), ("end", end)):
            if not 0.0 <= value <= 1.0:
                raise ConfigurationError(f"{name} must be in [0, 1], got {value}")
        self.start = start
        self.end = end

    def value(self, batches_completed: int) -> float:
        return self.start + (self.end - self.start) * self.progress(batches_completed)

    def applies_to(self, encoder: SpinnEncoder) -> bool:
        return isinstance(encoder.training_policy, (Given, Mixed))

    def set_on(self, encoder: SpinnEncoder, value: float) -> None:
        # At 0, the given transitions themselves (planned ahead, no draws): teacher forcing.
        encoder.training_policy = Mixed(value) if value > 0 else Given()

    def probability(self, batches_completed: int) -> float:
        """`self_transition_prob` for the batch after `batches_completed` training batches."""
        return self.value(batches_completed)
