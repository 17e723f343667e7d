"""Training signal for the integrated parser (eq. 7's transition term) and what the parser
would have done, for metrics."""

import torch
from torch.nn import functional

from spinn_allennlp.core.output import GIVEN, SpinnOutput
from spinn_allennlp.core.transitions import PAD


def gold_steps(output: SpinnOutput, gold: torch.Tensor) -> torch.Tensor:
    """``gold`` (B, T') cut to the steps the pass ran, as long."""
    if output.transition_logits is None:
        raise ValueError("this output has no transition logits: the encoder has no parser")
    return gold[:, : output.transition_logits.size(1)].long()


def transition_loss(output: SpinnOutput, gold: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the parser's SHIFT/REDUCE logits against the gold transitions, averaged
    over the batch's real (non-PAD) steps: the paper's eq. 7 term for one sentence batch, before
    the weight alpha. (Eq. 7 writes a sum; averaging keeps alpha = 3.9 from swamping the label
    loss over ~30 steps a sentence.) 0 when there are no steps.

    output: an encoder pass with ``transition_logits`` (B, T, 2); gold: (B, T') with PAD = -1.
    """
    gold = gold_steps(output, gold)
    logits = output.transition_logits
    assert logits is not None  # gold_steps checked it
    real = gold != PAD
    if not bool(real.any()):
        return logits.sum() * 0.0
    return functional.cross_entropy(logits[real], gold[real])


def parser_predictions(output: SpinnOutput) -> torch.Tensor:
    """Shape (B, T): what the parser would do at each step. The transitions it followed when it
    followed its own (predicted or mixed mode); its argmax when it was teacher-forced with given
    transitions (then those were followed, not its choices)."""
    if output.transition_logits is None:
        raise ValueError("this output has no transition logits: the encoder has no parser")
    if output.mode != GIVEN:
        return output.transitions[:, : output.transition_logits.size(1)]
    return output.transition_logits.argmax(dim=-1)
