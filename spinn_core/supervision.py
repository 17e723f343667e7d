"""Training signal for the integrated parser (eq. 7's transition term, and REINFORCE's for a
parser that samples its trees), what the parser would have done (for metrics), and two autograd
helpers an encoder uses to train its parser inside any model and to notice when nothing does."""

from typing import Optional

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


class _AttachedLoss(torch.autograd.Function):
    """Identity on ``tensor``; in backward, also sends a gradient of 1 into ``loss``."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
        ctx.loss_like = (loss.dtype, loss.device)
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        dtype, device = ctx.loss_like
        return grad, torch.ones((), dtype=dtype, device=device)


def attach_loss(tensor: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
    """``tensor`` unchanged, carrying ``loss`` (a scalar) into any backward pass through it.

    Whatever loss a model backpropagates through the returned tensor, the parameters behind
    ``loss`` get the gradient of ``loss`` as well, once per backward pass (autograd sums the
    tensor's gradients before calling this backward): an encoder can train an auxiliary
    objective of its own inside a model that knows nothing of it. The loss's value is not added
    to what the model reports.
    """
    return _AttachedLoss.apply(tensor, loss)


class GradientProbe:
    """Records whether any gradient reached a parameter passed to :meth:`watch`: how an
    encoder notices that nothing trains its parser.

    It hooks the parameter itself, so it sees every path a gradient can take to it: a
    transition loss on the logits, REINFORCE through the log-probabilities of the moves taken,
    or the soft stack's strengths inside the loop. The hook is removed (:meth:`release`) once
    it has fired, so a trained model carries none.
    """

    def __init__(self) -> None:
        self.reached = False
        self._handle: Optional[torch.utils.hooks.RemovableHandle] = None

    def watch(self, parameter: torch.Tensor) -> None:
        if self._handle is None and not self.reached:
            self._handle = parameter.register_hook(self._mark)

    def _mark(self, grad: torch.Tensor) -> None:
        self.reached = True

    def release(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None


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


def policy_gradient_loss(
    log_probs: torch.Tensor,
    reward: torch.Tensor,
    baseline: torch.Tensor,
    entropy: Optional[torch.Tensor] = None,
    entropy_weight: float = 0.0,
    normalize: bool = True,
) -> torch.Tensor:
    """REINFORCE's surrogate loss for a parser that sampled its trees (latent trees).

    ``log_probs``: (B,) the log-probability of each sampled tree (``SpinnOutput.
    action_log_probs`` summed over steps, and over both sentences of a pair); ``reward``: (B,)
    what each tree earned (e.g. minus the task's loss on that example); ``baseline``: (B,) a
    reward that does not depend on the sampled tree (self-critical: the greedy tree's); the
    loss's gradient, -mean((reward - baseline) * grad log p(tree)), is then an unbiased
    estimate of minus the gradient of the expected reward. ``normalize`` divides the advantages
    by their standard deviation over the batch (variance normalisation, as Havrylov et al.
    2019; a scale common to the batch, so the direction is still the unbiased one's up to a
    positive factor). ``entropy``: (B,) the entropy of each tree's choices (summed over steps),
    whose mean is subtracted with ``entropy_weight`` (a bonus that keeps the parser exploring).
    """
    loss = -(advantages(reward, baseline, normalize) * log_probs).mean()
    if entropy is not None and entropy_weight:
        loss = loss - entropy_weight * entropy.mean()
    return loss


def advantages(
    reward: torch.Tensor, baseline: torch.Tensor, normalize: bool = True
) -> torch.Tensor:
    """(B,) ``reward - baseline``, detached, divided by its standard deviation over the batch
    when ``normalize`` (and the batch has more than one example)."""
    advantage = (reward - baseline).detach()
    if normalize and advantage.numel() > 1:
        advantage = advantage / (advantage.std() + 1e-8)
    return advantage


def draw_advantages(rewards: torch.Tensor, kind: str, normalize: bool = True) -> torch.Tensor:
    """(K, B) the advantages of K trees drawn for each of B examples, from their (K, B)
    ``rewards``, with no extra pass for a baseline (detached):

    - ``"leave_one_out"``: each draw's reward less the mean of the other K - 1 draws' (Kool et
      al. 2019): a baseline that does not depend on the draw it is subtracted from, so
      ``mean_k A_k grad log p(tree_k)`` stays an unbiased estimate of the expected reward's
      gradient, and one that follows each example's own difficulty.
    - ``"best_draw"``: 1 - 1/K for each example's highest-reward draw (the first of a tie) and
      -1/K for the others; 0 for an example whose draws all earned the same. It pushes the
      parser towards the best of its K trees and away from the rest, whatever the margin:
      biased (only the ranking counts), but not swayed by the size of a reward's noise.

    ``normalize`` divides by the standard deviation over all K x B advantages, as
    :func:`advantages` does."""
    if rewards.dim() != 2 or rewards.size(0) < 2:
        raise ValueError(f"draw_advantages needs (K >= 2, B) rewards, got {tuple(rewards.shape)}")
    rewards = rewards.detach()
    draws = rewards.size(0)
    if kind == "leave_one_out":
        others = (rewards.sum(dim=0, keepdim=True) - rewards) / (draws - 1)
        advantage = rewards - others
    elif kind == "best_draw":
        best = functional.one_hot(rewards.argmax(dim=0), draws).t().to(rewards.dtype)
        varied = (rewards.max(dim=0).values > rewards.min(dim=0).values).to(rewards.dtype)
        advantage = (best - 1.0 / draws) * varied
    else:
        raise ValueError(f"unknown kind of draw advantage {kind!r}: leave_one_out or best_draw")
    if normalize and advantage.numel() > 1:
        advantage = advantage / (advantage.std() + 1e-8)
    return advantage


def clipped_policy_loss(
    log_probs: torch.Tensor,
    old_log_probs: torch.Tensor,
    advantage: torch.Tensor,
    clip: float = 0.2,
    entropy: Optional[torch.Tensor] = None,
    entropy_weight: float = 0.0,
) -> torch.Tensor:
    """PPO's clipped surrogate loss (Schulman et al. 2017) for trees sampled by an earlier
    parser: ``-mean(min(r A, clip(r, 1 - clip, 1 + clip) A))`` with ``r = exp(log_probs -
    old_log_probs)``, the ratio of each tree's probability under the parser now to its
    probability when it was drawn, and ``A`` its (detached) advantage. At ``r = 1`` (the
    parser unchanged) its gradient is REINFORCE's, ``-mean(A grad log p)``; a tree whose ratio
    has already moved past ``1 ± clip`` in the direction its advantage pushes gives no gradient,
    which is what lets the parser take several steps on the same trees without running away
    from the parser that drew them. ``entropy``: as in :func:`policy_gradient_loss`."""
    ratio = torch.exp(log_probs - old_log_probs.detach())
    advantage = advantage.detach()
    surrogate = torch.min(ratio * advantage, ratio.clamp(1.0 - clip, 1.0 + clip) * advantage)
    loss = -surrogate.mean()
    if entropy is not None and entropy_weight:
        loss = loss - entropy_weight * entropy.mean()
    return loss


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
