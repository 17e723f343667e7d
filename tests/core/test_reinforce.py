"""REINFORCE for a sampling parser, on a sentence small enough to enumerate every tree: the
log-probability a sampled pass reports is the tree's probability under the parser, and the
policy-gradient estimate is unbiased for the gradient of the expected reward."""

import itertools
import random

import pytest
import torch

from spinn_core.policies import Given, Sampled
from spinn_core.policy_gradient_losses import draw_advantages, policy_gradient_loss
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
from spinn_core.transitions import REDUCE, SHIFT, is_valid

WORDS = 4


def all_trees(num_words):
    """Every binary tree over ``num_words`` words, as transitions (Catalan many)."""
    steps = 2 * num_words - 1
    return [
        list(seq)
        for seq in itertools.product([SHIFT, REDUCE], repeat=steps)
        if is_valid(list(seq), num_words)
    ]


def tree_log_probs(model, inputs, mask, trees):
    """log p(tree) under the parser's legal-move distribution, for each tree, by following it
    with the given policy (the parser sees the same stacks as when sampling it)."""
    given = torch.tensor(trees)
    out = model(
        inputs.expand(len(trees), -1, -1), mask.expand(len(trees), -1), given, policy=Given()
    )
    log_probs = torch.zeros(len(trees), dtype=inputs.dtype)
    for b, tree in enumerate(trees):
        depth, shifted = 0, 0
        for t, action in enumerate(tree):
            if shifted < WORDS and depth >= 2:  # both moves legal
                log_probs[b] = (
                    log_probs[b] + torch.log_softmax(out.transition_logits[b, t], -1)[action]
                )
            depth += 1 if action == SHIFT else -1
            shifted += action == SHIFT
    return log_probs


def parameter_gradient(model, loss):
    model.zero_grad()
    loss.backward()
    return torch.cat(
        [
            (p.grad if p.grad is not None else torch.zeros_like(p)).flatten()
            for p in model.parameters()
        ]
    )


def setup():
    torch.manual_seed(0)
    model = Spinn(5, 4, tracking_dim=3, predict_transitions=True).double()
    inputs, mask, _ = make_batch([WORDS], 5, random.Random(0), "cpu", torch.float64)
    trees = all_trees(WORDS)
    rewards = torch.linspace(-1.0, 2.0, len(trees), dtype=torch.float64)  # one per tree
    return model, inputs, mask, trees, rewards


def test_there_are_catalan_many_trees_and_their_probabilities_sum_to_one():
    model, inputs, mask, trees, _ = setup()
    assert len(trees) == 5
    total = tree_log_probs(model, inputs, mask, trees).exp().sum()
    assert abs(float(total) - 1.0) < 1e-12


def test_the_estimator_is_unbiased_in_expectation_over_every_tree():
    """sum over trees of p(tree) (R(tree) - b) grad log p(tree) = grad sum p(tree) R(tree),
    for any baseline b not depending on the tree (computed exactly, no sampling)."""
    model, inputs, mask, trees, rewards = setup()
    exact = parameter_gradient(
        model, (tree_log_probs(model, inputs, mask, trees).exp() * rewards).sum()
    )
    assert exact.abs().max() > 1e-3  # a real gradient to compare with
    for baseline in (0.0, 0.7):
        log_probs = tree_log_probs(model, inputs, mask, trees)
        weights = (log_probs.exp() * (rewards - baseline)).detach()
        estimate = parameter_gradient(model, (weights * log_probs).sum())
        torch.testing.assert_close(estimate, exact, atol=1e-12, rtol=0)


def test_the_leave_one_out_estimator_is_unbiased_over_every_pair_of_draws():
    """Two trees drawn per sentence, each compared with the other (`draw_advantages`,
    leave-one-out): the expectation over every pair of trees of mean_k A_k grad log p(tree_k)
    is the gradient of the expected reward (computed exactly, no sampling)."""
    model, inputs, mask, trees, rewards = setup()
    exact = parameter_gradient(
        model, (tree_log_probs(model, inputs, mask, trees).exp() * rewards).sum()
    )
    log_probs = tree_log_probs(model, inputs, mask, trees)
    p = log_probs.exp().detach()
    weights = torch.zeros_like(p)
    for i, j in itertools.product(range(len(trees)), repeat=2):
        pair = torch.stack([rewards[i], rewards[j]]).unsqueeze(1)  # (K=2, B=1)
        advantage = draw_advantages(pair, "leave_one_out", normalize=False)[:, 0]
        weights[i] += p[i] * p[j] * advantage[0] / 2
        weights[j] += p[i] * p[j] * advantage[1] / 2
    estimate = parameter_gradient(model, (weights * log_probs).sum())
    torch.testing.assert_close(estimate, exact, atol=1e-12, rtol=0)


def test_draw_advantages_by_hand():
    # (K=3, B=2): example 0 drew rewards 1, 3, 2; example 1 three equal rewards.
    rewards = torch.tensor([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]], dtype=torch.float64)
    loo = draw_advantages(rewards, "leave_one_out", normalize=False)
    expected = torch.tensor([[1 - 2.5, 0.0], [3 - 1.5, 0.0], [2 - 2.0, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(loo, expected, atol=1e-15, rtol=0)
    best = draw_advantages(rewards, "best_draw", normalize=False)
    third = 1.0 / 3.0
    expected = torch.tensor([[-third, 0.0], [1 - third, 0.0], [-third, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(best, expected, atol=1e-15, rtol=0)
    # A tie for the best: the first of the tied draws.
    tied = torch.tensor([[2.0], [2.0], [1.0]], dtype=torch.float64)
    tied = draw_advantages(tied, "best_draw", normalize=False)
    assert tied[:, 0].tolist() == [1 - 1.0 / 3.0, -1.0 / 3.0, -1.0 / 3.0]
    normalized = draw_advantages(rewards, "leave_one_out")
    torch.testing.assert_close(normalized.std(), torch.tensor(1.0, dtype=torch.float64))
    for bad_rewards, kind in ((rewards[:1], "best_draw"), (rewards[0], "leave_one_out")):
        with pytest.raises(ValueError, match="K >= 2"):
            draw_advantages(bad_rewards, kind)
    with pytest.raises(ValueError, match="unknown kind"):
        draw_advantages(rewards, "mean")


def test_sampled_trees_give_the_expected_gradient_on_average():
    """Monte Carlo: the policy-gradient loss on many sampled trees of the same sentence,
    differentiated, is minus the exact gradient of the expected reward, within the sampling
    error (4,000 samples; the tolerance is 4 standard errors of the mean, estimated from the
    per-tree terms)."""
    model, inputs, mask, trees, rewards = setup()
    exact = parameter_gradient(
        model, (tree_log_probs(model, inputs, mask, trees).exp() * rewards).sum()
    )
    samples = 4000
    torch.manual_seed(1)
    out = model(inputs.expand(samples, -1, -1), mask.expand(samples, -1), policy=Sampled())
    index = {tuple(tree): i for i, tree in enumerate(trees)}
    drawn = torch.tensor([index[tuple(row)] for row in out.transitions.tolist()])
    reward = rewards[drawn]
    baseline = torch.full_like(reward, 0.5)
    log_probs = out.action_log_probs.sum(dim=1)
    loss = policy_gradient_loss(log_probs, reward, baseline, normalize=False)
    estimate = -parameter_gradient(model, loss)
    # Per-tree terms (R - b) grad log p(tree), enumerated: their spread under p bounds the
    # error of a mean over `samples` draws.
    terms = torch.stack(
        [
            (rewards[i] - 0.5)
            * parameter_gradient(model, tree_log_probs(model, inputs, mask, [tree])[0])
            for i, tree in enumerate(trees)
        ]
    )
    p = tree_log_probs(model, inputs, mask, trees).exp().detach()
    spread = ((terms - exact) ** 2 * p.unsqueeze(1)).sum(dim=0).sqrt()
    standard_error = spread / samples**0.5
    assert ((estimate - exact).abs() <= 5 * standard_error + 1e-12).all()
    # And the sampling frequencies match the tree probabilities.
    frequency = torch.bincount(drawn, minlength=len(trees)).double() / samples
    assert ((frequency - p).abs() <= 5 * (p * (1 - p) / samples).sqrt()).all()
