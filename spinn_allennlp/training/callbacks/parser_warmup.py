from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.training.callbacks.encoder_schedule import EncoderSchedule


@TrainerCallback.register("parser_warmup")
class ParserWarmup(EncoderSchedule):
    """Keeps a latent parser frozen for the first `batches` training batches: every `spinn`
    encoder's parser parameters (`SpinnEncoder.parser_parameters()`) have `requires_grad` off,
    so the parser keeps its initial weights and draws its trees near-uniformly (a sampling policy)
    while the rest of the model learns the task on them; then it is unfrozen and trained as
    configured (REINFORCE, the soft stack, ...). The optimizer skips parameters without a
    gradient, so the parser's optimizer state starts at the unfreezing.

    Why: measured on ListOps (results/listops/README.md, "Why they collapse"), a parser trained
    from the first batch becomes deterministic within one epoch, before the composition can tell
    trees apart; a composition trained on near-uniform trees does tell them apart (the gold
    trees give the lowest loss after a few hundred batches). In our ListOps pilots it changed
    which trivial tree the parser settled on, not that it settled on one.

    The batch's metrics get `parser_frozen` (1 or 0). The batch count is saved with the
    trainer's checkpoints, so `--recover` resumes where it was.

    Registered as a `TrainerCallback` with name "parser_warmup".

    # Parameters

    serialization_dir : `str`
        Given by the trainer.
    batches : `int`
        Training batches with the parser frozen.
    """

    attribute = "parser_frozen"

    def __init__(self, serialization_dir: str, batches: int) -> None:
        if batches < 1:
            raise ConfigurationError(f"parser_warmup: batches must be positive, got {batches}")
        super().__init__(serialization_dir, hold_batches=batches, ramp_batches=0)

    def value(self, batches_completed: int) -> float:
        return 1.0 if batches_completed < self.hold_batches else 0.0
