"""The integrated parser's supervised training signal: eq. 7's transition term against gold
transitions (:func:`transition_loss`), its typed-REDUCE counterpart (:func:`reduce_type_loss`) and
the soft stack's strength entropy (:func:`strength_entropy`); and what the parser would have done
at each step (:func:`parser_predictions`, :func:`parser_types`), for the parse metrics.

A parser that samples its trees learns from REINFORCE and PPO instead
(``policy_gradient_losses.py``); an encoder carries its own terms into a model's backward pass
with ``gradient_hooks.attach_loss``."""

import torch
from torch.nn import functional

from spinn_core.output import GIVEN, SpinnOutput
from spinn_core.transitions import PAD


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


def reduce_type_loss(output: SpinnOutput, gold_types: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the type classifier's logits against the gold type of each gold REDUCE
    (typed REDUCE, NSHRDLU §3.3), averaged over the batch's gold REDUCEs; 0 when there are
    none. ``gold_types``: (B, T') with -1 at SHIFTs and padding; ``output`` from a pass of an
    encoder with typed REDUCE and a parser (``reduce_type_logits`` (B, T, K))."""
    logits = output.reduce_type_logits
    if logits is None:
        raise ValueError("this output has no REDUCE type logits: no typed parser")
    gold = gold_types[:, : logits.size(1)].long()
    typed = gold >= 0
    if not bool(typed.any()):
        return logits.sum() * 0.0
    return functional.cross_entropy(logits[typed], gold[typed])


def parser_types(output: SpinnOutput) -> torch.Tensor:
    """Shape (B, T): the REDUCE type the typed parser would give each step: the types it
    followed when it followed its own transitions; its argmax when teacher-forced (as
    :func:`parser_predictions`)."""
    if output.reduce_type_logits is None:
        raise ValueError("this output has no REDUCE type logits: no typed parser")
    if output.mode != GIVEN and output.reduce_types is not None:
        return output.reduce_types[:, : output.reduce_type_logits.size(1)]
    return output.reduce_type_logits.argmax(dim=-1)


def strength_entropy(output: SpinnOutput) -> torch.Tensor:
    """The mean binary entropy (nats) of a soft pass's REDUCE strengths over the batch's steps:
    0 when every step is a clear SHIFT or REDUCE, log 2 when every step is an even mix."""
    if output.reduce_strengths is None:
        raise ValueError("this output has no REDUCE strengths: not a soft-stack pass")
    strength = output.reduce_strengths
    real = output.transitions[:, : strength.size(1)] != PAD
    if not bool(real.any()):
        return strength.sum() * 0.0
    p = strength[real].clamp(1e-6, 1 - 1e-6)
    return -(p * p.log() + (1 - p) * (1 - p).log()).mean()
