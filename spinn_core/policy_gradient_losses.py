"""REINFORCE and PPO for a parser that samples its trees (latent trees): the surrogate losses
(:func:`policy_gradient_loss`, PPO's :func:`clipped_policy_loss`) and the advantages they weigh
each tree's log-probability with (:func:`advantages` against a baseline's reward,
:func:`draw_advantages` among K trees drawn per example)."""

from typing import Optional

import torch
from torch.nn import functional


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
