from typing import List

from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.training.callbacks.encoder_schedule import EncoderSchedule
from spinn_core.policies import TransitionPolicy


@TrainerCallback.register("parser_temperature_schedule")
class ParserTemperatureSchedule(EncoderSchedule):
    """Anneals the temperature of a SPINN parser's softmax during training: every `spinn`
    encoder's policies with a `temperature` (`"soft"`, `"straight_through_gumbel"`,
    `"sampled"`; training and evaluation alike) have it at `start` for `hold_batches` training
    batches, then falling geometrically to `end` over `ramp_batches` batches and staying
    there. On the soft stack
    a low temperature makes the strengths nearly 0 or 1, so the soft pass comes to follow one
    tree, the one the discrete stack follows at evaluation (a `"greedy"` evaluation policy); for
    straight-through choices it sharpens the softmax whose gradient stands in for the choice's.

    The batch count is saved with the trainer's checkpoints, so `--recover` resumes the
    schedule where it was.

    Registered as a `TrainerCallback` with name "parser_temperature_schedule".

    # Parameters

    serialization_dir : `str`
        Given by the trainer.
    start : `float`, optional (default = `1.0`)
    end : `float`, optional (default = `0.1`)
    hold_batches : `int`, optional (default = `0`)
    ramp_batches : `int`, optional (default = `10000`)
        0 jumps from `start` to `end` after `hold_batches`.
    """

    attribute = "parser_temperature"
    needs = 'a spinn encoder with a policy that has a temperature ("soft", ...)'

    def __init__(
        self,
        serialization_dir: str,
        start: float = 1.0,
        end: float = 0.1,
        hold_batches: int = 0,
        ramp_batches: int = 10000,
    ) -> None:
        super().__init__(serialization_dir, hold_batches, ramp_batches)
        if start <= 0 or end <= 0:
            raise ConfigurationError(f"temperatures must be positive, got {start} and {end}")
        self.start = start
        self.end = end

    def value(self, batches_completed: int) -> float:
        return self.start * (self.end / self.start) ** self.progress(batches_completed)

    def applies_to(self, encoder: SpinnEncoder) -> bool:
        return bool(_tempered(encoder))

    def set_on(self, encoder: SpinnEncoder, value: float) -> None:
        for policy in _tempered(encoder):
            policy.temperature = value  # type: ignore[attr-defined]

    def temperature(self, batches_completed: int) -> float:
        """`parser_temperature` for the batch after `batches_completed` training batches."""
        return self.value(batches_completed)


def _tempered(encoder: SpinnEncoder) -> List[TransitionPolicy]:
    """The encoder's policies that read the parser's softmax at a temperature."""
    policies = (encoder.training_policy, encoder.evaluation_policy)
    return [policy for policy in policies if hasattr(policy, "temperature")]
