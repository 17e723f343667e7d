import math
from typing import List, Optional, Protocol, Sequence, Tuple

import torch
from allennlp.common import FromParams

from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules
from spinn_core.output import SpinnOutput
from spinn_core.policies import Greedy, Replayed, Sampled, TransitionPolicy
from spinn_core.policy_gradient_losses import (
    advantages,
    clipped_policy_loss,
    draw_advantages,
    policy_gradient_loss,
)

BASELINES = ("greedy", "leave_one_out", "best_draw")

# A run whose further updates are not taken for this many training batches in a row has no
# `parser_updates` callback (or a trainer that ignores it): an error, early in the first epoch.
UNTAKEN_LIMIT = 20


class ModelPass(Protocol):
    """The model's forward pass again, from the batch's inputs, with trees chosen by `policy`:
    what a model trained with `PolicyGradient` implements (spinn_classifier's and spinn_nli's
    `classify`) for the baseline's greedy pass, the further draws and PPO's replays. Returns
    ((copies * B,) the task's loss of each example for `loss`, or the logits for
    `classifier_loss`; the encoder's outputs of that pass). `copies`: the batch repeated that
    many times in one pass (row c * B + b is example b's c-th copy), so that several draws per
    example cost one pass over a larger batch."""

    def __call__(
        self, policy: TransitionPolicy, copies: int = 1
    ) -> Tuple[torch.Tensor, Sequence[Optional[SpinnOutput]]]: ...


class PolicyGradient(torch.nn.Module, FromParams):
    """Trains a tree encoder's parser from the task's loss alone (latent trees), by REINFORCE
    with a self-critical baseline (Rennie et al. 2017; as Havrylov et al. 2019 on ListOps),
    optionally followed by PPO's clipped updates on the same trees.

    While the model trains, each sentence's tree is sampled from the parser's distribution
    over legal moves (`spinn_core.policies.Sampled`); its reward is minus the task's loss on that
    example, and its baseline minus the loss the parser's greedy tree gets (a second pass
    without gradients). The parser (through the log-probability of each sampled tree) is pushed
    towards trees that did better than its own greedy choice; an entropy bonus keeps it
    exploring. The task's loss trains everything else as usual. At evaluation the encoder
    follows its greedy parse.

    With `updates_per_batch` = K > 1 the parser takes K - 1 more steps on each batch's trees
    after the trainer's step (Havrylov et al. take about 15): each recomputes the trees'
    log-probabilities under the parser as it is now (`spinn_core.policies.Replayed`) and follows
    PPO's clipped surrogate (Schulman et al. 2017;
    `spinn_core.policy_gradient_losses.clipped_policy_loss`), and only the parser's parameters
    move. They wait in this module, and the trainer callback `parser_updates` takes them
    (`take_updates`): a model cannot step the optimizer itself, and the callback runs after the
    trainer's own step and before the checkpoint, so `--recover` stays exact. A run with K > 1
    and no such callback stops within its first 20 batches with an error naming it (not at the
    first: under gradient accumulation the callback takes a batch's updates only after the later
    batches of its group).

    With `draws` = K > 1 the parser learns from K trees per example: the training pass's and
    K - 1 more drawn by reruns of the model's pass (with gradients, for their log-probabilities;
    the task's loss trains the rest of the model on the first draw only, as with K = 1). Each
    draw's advantage is its reward less the greedy tree's (`baseline: "greedy"`), less the mean
    of the other draws' (`"leave_one_out"`, Kool et al. 2019: unbiased, and no greedy pass), or
    the best of the K pushed up and the rest down whatever the margin (`"best_draw"`: biased,
    ranking only; `spinn_core.policy_gradient_losses.draw_advantages`). A pass costs about as
    much as the training pass, so K draws make the parser's part of a batch about K times as
    slow.

    A model that takes a `policy_gradient` calls :meth:`loss` (a classifier trained by
    cross-entropy, as `spinn_classifier` and `spinn_nli`, calls :meth:`classifier_loss`); the
    encoder needs a parser (`predict_transitions: true`) and no gold transition loss. Give the
    parser its own learning rate with the optimizer's `parameter_groups` (e.g.
    `[["_encoder\\\\.spinn\\\\.tracker"], {"lr": 1e-4}]`).

    # Parameters

    weight : `float`, optional (default = `1.0`)
        The weight of the REINFORCE term in the loss (and of PPO's).
    entropy_weight : `float`, optional (default = `1e-4`)
        The weight of the entropy bonus (mean over the batch of each tree's summed entropy).
    temperature : `float`, optional (default = `1.0`)
        Sample from the parser's softmax at this temperature.
    normalize_advantage : `bool`, optional (default = `True` without `running_std`)
        Divide the advantages by their standard deviation over the batch.
    running_std : `float`, optional (default = `0.0`)
        Above 0: divide the advantages instead by a running standard deviation, at least 1:
        the square root of a running mean of each batch's advantage variance, with this
        decay (Havrylov et al. 2019: 0.9, starting from 1). Unlike the batch's, it does not
        blow up a batch whose trees all earned nearly the same. Kept in the model's state,
        so `--recover` resumes it. Not with `normalize_advantage: true`.
    normalized_entropy : `bool`, optional (default = `False`)
        The entropy bonus on each tree's mean entropy per free choice, in units of its
        maximum (log 2 for SHIFT or REDUCE; steps with one legal move do not count), as
        Havrylov et al. normalise theirs, instead of its entropy summed over steps. (Their
        weight, 1e-4, is for this normalised entropy.)
    updates_per_batch : `int`, optional (default = `1`)
        How many times the parser is updated on each batch's trees: 1 is REINFORCE alone;
        more adds PPO's clipped updates (needs the trainer callback `parser_updates`).
    clip : `float`, optional (default = `0.2`)
        PPO's clipping range of the probability ratio.
    draws : `int`, optional (default = `1`)
        Trees drawn per example for the parser's estimate (not with PPO's further updates).
    baseline : `str`, optional (default = `"greedy"`)
        What each draw's reward is compared with: `"greedy"` (the greedy tree's reward,
        self-critical), `"leave_one_out"` or `"best_draw"` (both need `draws` > 1).
    """

    # With `running_std`: the running variance of the advantages (a buffer).
    advantage_variance: torch.Tensor

    def __init__(
        self,
        weight: float = 1.0,
        entropy_weight: float = 1e-4,
        temperature: float = 1.0,
        normalize_advantage: Optional[bool] = None,
        updates_per_batch: int = 1,
        clip: float = 0.2,
        draws: int = 1,
        baseline: str = "greedy",
        running_std: float = 0.0,
        normalized_entropy: bool = False,
    ) -> None:
        super().__init__()
        with configuration_errors():
            rules.check_policy_gradient(
                running_std,
                normalize_advantage,
                updates_per_batch,
                clip,
                draws,
                baseline,
                BASELINES,
            )
        self.weight = weight
        self.entropy_weight = entropy_weight
        self.temperature = temperature
        self.normalize_advantage = (
            normalize_advantage if normalize_advantage is not None else not running_std
        )
        self.running_std = running_std
        self.normalized_entropy = normalized_entropy
        if running_std:
            # The running variance of the advantages (a buffer: saved with the model).
            self.register_buffer("advantage_variance", torch.ones(()))
        self.updates_per_batch = updates_per_batch
        self.clip = clip
        self.draws = draws
        self.baseline = baseline
        self.sampling = Sampled(temperature)
        # The recording sampler of the batch being trained (updates_per_batch > 1).
        self._recording: Optional[Sampled] = None
        self._pending: List["ParserUpdate"] = []
        self._previous_update: Optional["ParserUpdate"] = None
        self._batches_not_taken = 0

    def policy(self) -> TransitionPolicy:
        """How trees are chosen while the model trains (call once per training batch)."""
        if self.updates_per_batch == 1:
            return self.sampling
        self._recording = Sampled(self.temperature, record=True)
        return self._recording

    def loss(
        self,
        task_losses: torch.Tensor,
        trees: Sequence[Optional[SpinnOutput]],
        rerun: ModelPass,
    ) -> torch.Tensor:
        """The REINFORCE term for one batch. `task_losses`: (B,) the task's loss of each example
        with its sampled trees, `trees`: the encoder's outputs of that pass (one per sentence of
        an example: two for a pair; None for an encoder without a parser), and `rerun(policy)`:
        the model's (B,) losses and encoder outputs with trees chosen by `policy`, called once
        with the greedy policy, without gradients, for the baseline, and by PPO's further
        updates (:meth:`take_updates`) with the sampled trees replayed."""
        scored = tree_scores(trees, self.normalized_entropy)
        if scored is None:
            return task_losses.sum() * 0.0
        log_probs, entropy = scored
        if not (log_probs.requires_grad or entropy.requires_grad):
            # Nothing the term could train: the parser is frozen (`parser_warmup`) and reads
            # nodes it does not train. Its gradient would be zero, so the greedy pass and the
            # further draws are not run (they cost as much as the training pass each).
            return task_losses.sum() * 0.0
        if self.draws > 1:
            return self.weight * self._many_draws_loss(task_losses, log_probs, entropy, rerun)
        with torch.no_grad():
            baseline = rerun(Greedy())[0]
        advantage = self._scaled(advantages(-task_losses, -baseline, self.normalize_advantage))
        # REINFORCE's surrogate on advantages already scaled (`spinn_core.policy_gradient_losses`).
        surrogate = policy_gradient_loss(
            log_probs,
            reward=advantage,
            baseline=torch.zeros_like(advantage),
            entropy=entropy,
            entropy_weight=self.entropy_weight,
            normalize=False,
        )
        if self.updates_per_batch > 1:
            self._keep_update(log_probs, advantage, rerun)
        return self.weight * surrogate

    def _scaled(self, advantage: torch.Tensor) -> torch.Tensor:
        """`advantage` divided by the running standard deviation (at least 1), after folding
        this batch's variance into it, with `running_std`; as it is otherwise. Only while
        training: an evaluation pass never gets here."""
        if not self.running_std or advantage.numel() < 2:
            return advantage
        variance = self.advantage_variance
        variance.mul_(self.running_std).add_((1.0 - self.running_std) * advantage.var())
        return advantage / variance.sqrt().clamp(min=1.0)

    def classifier_loss(
        self,
        logits: torch.Tensor,
        labels: torch.Tensor,
        trees: Sequence[Optional[SpinnOutput]],
        rerun: ModelPass,
    ) -> torch.Tensor:
        """:meth:`loss` for a classifier whose task loss is the cross-entropy of `logits`
        (B, num_labels) against `labels` (B,): `rerun(policy)` gives the model's logits and
        encoder outputs again. PPO's further updates, if this batch has any, wait in this module
        for the `parser_updates` callback (:meth:`take_updates`)."""

        def example_losses(batch_logits: torch.Tensor) -> torch.Tensor:
            # Shape: (batch_size,)
            return torch.nn.functional.cross_entropy(batch_logits, labels, reduction="none")

        def rerun_losses(policy: TransitionPolicy, copies: int = 1):
            rerun_logits, rerun_trees = rerun(policy, copies)
            # Shape: (copies * batch_size,)
            losses = torch.nn.functional.cross_entropy(
                rerun_logits, labels.repeat(copies), reduction="none"
            )
            return losses, rerun_trees

        return self.loss(example_losses(logits), trees, rerun_losses)

    def _many_draws_loss(
        self,
        task_losses: torch.Tensor,
        log_probs: torch.Tensor,
        entropy: torch.Tensor,
        rerun: ModelPass,
    ) -> torch.Tensor:
        """The surrogate over the training pass's trees and `draws` - 1 more (`draws` > 1),
        drawn in one rerun of the batch repeated `draws` - 1 times when `rerun` takes
        `copies`, else one rerun each."""
        rewards, all_log_probs, entropies = [-task_losses.detach()], [log_probs], [entropy]
        further = self.draws - 1
        batch_size = task_losses.size(0)
        passes = [rerun(self.sampling, further)]
        for losses, trees in passes:
            scored = tree_scores(trees, self.normalized_entropy)
            assert scored is not None  # the same encoder that sampled the first draw
            # Shape: (draws in this pass, batch_size) each.
            rewards.extend((-losses.detach()).view(-1, batch_size))
            all_log_probs.extend(scored[0].view(-1, batch_size))
            entropies.extend(scored[1].view(-1, batch_size))
        reward = torch.stack(rewards)
        if self.baseline == "greedy":
            with torch.no_grad():
                greedy = -rerun(Greedy())[0]
            advantage = advantages(reward, greedy.expand_as(reward), self.normalize_advantage)
        else:
            advantage = draw_advantages(reward, self.baseline, self.normalize_advantage)
        advantage = self._scaled(advantage)
        loss = -(advantage * torch.stack(all_log_probs)).mean()
        if self.entropy_weight:
            loss = loss - self.entropy_weight * torch.stack(entropies).mean()
        return loss

    def take_updates(self) -> List["ParserUpdate"]:
        """PPO's further updates of the batches :meth:`loss` saw since the last call (one per
        batch; several under gradient accumulation), for the `parser_updates` callback; none
        with `updates_per_batch` = 1."""
        updates, self._pending = self._pending, []
        return updates

    def _keep_update(
        self, log_probs: torch.Tensor, advantage: torch.Tensor, rerun: ModelPass
    ) -> None:
        # Batches in a row whose predecessor's updates were not taken by the time they came:
        # one at a time under gradient accumulation (the callback takes a whole group's after
        # its step), every batch when nothing takes them.
        previous = self._previous_update
        self._batches_not_taken = (
            self._batches_not_taken + 1 if previous is not None and previous.taken == 0 else 0
        )
        with configuration_errors():
            rules.check_updates_taken(self._batches_not_taken, UNTAKEN_LIMIT)
        if self._recording is None or self._recording.draws is None:
            raise RuntimeError("the trees were not sampled by this policy gradient's policy()")
        update = ParserUpdate(
            self,
            self._recording.draws,
            log_probs.detach(),
            advantage.detach(),
            rerun,
        )
        self._recording = None
        self._pending.append(update)
        self._previous_update = update


class ParserUpdate:
    """PPO's further updates of the parser on one batch's sampled trees: :meth:`loss` reruns
    the model's pass on the same inputs with the trees replayed (`Replayed`), under the
    parameters as they are now, and returns the clipped surrogate against the log-probabilities
    the trees had when they were drawn. `further` updates are due (`updates_per_batch` - 1);
    `taken` counts those done."""

    def __init__(
        self,
        owner: PolicyGradient,
        draws: List[torch.Tensor],
        old_log_probs: torch.Tensor,
        advantage: torch.Tensor,
        rerun: ModelPass,
    ) -> None:
        self.owner = owner
        self.draws = draws
        self.old_log_probs = old_log_probs
        self.advantage = advantage
        self.rerun = rerun
        self.further = owner.updates_per_batch - 1
        self.taken = 0
        # Of the last :meth:`loss`: the fraction of trees whose ratio lies outside 1 +- clip.
        self.clipped_fraction = 0.0

    def loss(self) -> torch.Tensor:
        """The clipped surrogate (times the policy gradient's weight) of one further update."""
        owner = self.owner
        _, trees = self.rerun(Replayed(self.draws, owner.temperature))
        scored = tree_scores(trees, owner.normalized_entropy)
        assert scored is not None  # the same encoder that sampled these trees
        log_probs, entropy = scored
        with torch.no_grad():
            ratio = torch.exp(log_probs - self.old_log_probs)
            outside = (ratio < 1.0 - owner.clip) | (ratio > 1.0 + owner.clip)
            self.clipped_fraction = float(outside.float().mean())
        self.taken += 1
        return owner.weight * clipped_policy_loss(
            log_probs,
            self.old_log_probs,
            self.advantage,
            clip=owner.clip,
            entropy=entropy,
            entropy_weight=owner.entropy_weight,
        )


def tree_scores(
    trees: Sequence[Optional[SpinnOutput]], normalized_entropy: bool = False
) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
    """(B,) each example's log-probability of its trees (summed over steps and over the
    sentences of an example: a pair's two trees count together) and their summed entropy
    (with `normalized_entropy`, each tree's mean entropy per free choice over log 2, summed
    over an example's trees); None when no output carries them (an encoder without a
    sampling parser)."""
    log_probs, entropy = [], []
    for tree in trees:
        if tree is not None and tree.action_log_probs is not None:
            assert tree.action_entropy is not None  # a sampling policy reports both
            log_probs.append(tree.action_log_probs.sum(dim=1))
            if normalized_entropy:
                # A step with one legal move has a distribution of entropy exactly 0.
                free = (tree.action_entropy > 0).sum(dim=1).clamp(min=1)
                entropy.append(tree.action_entropy.sum(dim=1) / (free * math.log(2.0)))
            else:
                entropy.append(tree.action_entropy.sum(dim=1))
    if not log_probs:
        return None
    return torch.stack(log_probs).sum(dim=0), torch.stack(entropy).sum(dim=0)
