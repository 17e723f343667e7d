"""PPO's further updates of a latent parser: the replayed pass scores the sampled trees exactly,
the clipped surrogate's gradient is REINFORCE's while the parser is unchanged and vanishes
past the clip, and the updates on a batch raise the probability of the trees that did better."""

import random

import pytest
import torch

from spinn_core.policies import Replayed, Sampled
from spinn_core.policy_gradient_losses import clipped_policy_loss, policy_gradient_loss
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
from spinn_core.transitions import is_valid

LENGTHS = [1, 2, 3, 5, 8, 13, 13, 21, 34, 100]


def setup(lengths=LENGTHS, seed=0):
    torch.manual_seed(seed)
    model = Spinn(6, 5, tracking_dim=4, predict_transitions=True).double()
    inputs, mask, _ = make_batch(lengths, 6, random.Random(seed), "cpu", torch.float64)
    return model, inputs, mask


def sampled_pass(model, inputs, mask):
    sampling = Sampled(record=True)
    torch.manual_seed(1)
    return sampling, model(inputs, mask, policy=sampling)


def test_a_replayed_pass_is_the_sampled_pass_again():
    """Same trees, same sentence vectors, same log-probabilities and entropies (float64,
    lengths 1-100, ties in length included), with no random draw."""
    model, inputs, mask = setup()
    sampling, sampled = sampled_pass(model, inputs, mask)
    state = torch.get_rng_state()
    replayed = model(inputs, mask, policy=Replayed(sampling.draws))
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(replayed.transitions, sampled.transitions)
    for b, n in enumerate(LENGTHS):
        row = [int(t) for t in sampled.transitions[b] if t >= 0]
        assert is_valid(row, n)
    torch.testing.assert_close(replayed.sentence, sampled.sentence, rtol=0, atol=0)
    torch.testing.assert_close(replayed.action_log_probs, sampled.action_log_probs, rtol=0, atol=0)
    torch.testing.assert_close(replayed.action_entropy, sampled.action_entropy, rtol=0, atol=0)


def test_a_replay_over_another_batch_is_an_error():
    model, inputs, mask = setup()
    sampling, _ = sampled_pass(model, inputs, mask)
    with pytest.raises(ValueError, match="not the same batch|more steps"):
        model(inputs[:-1], mask[:-1], policy=Replayed(sampling.draws))
    with pytest.raises(ValueError, match="not the same batch|more steps"):
        model(inputs[1:], mask[1:], policy=Replayed(sampling.draws))


def parser_gradient(model, loss):
    model.zero_grad()
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parser_parameters()])


def test_the_clipped_surrogate_of_an_unchanged_parser_has_reinforces_gradient():
    model, inputs, mask = setup()
    advantage = torch.linspace(-1.5, 2.0, len(LENGTHS), dtype=torch.float64)
    sampling, sampled = sampled_pass(model, inputs, mask)
    old = sampled.action_log_probs.sum(dim=1)
    reinforce = parser_gradient(
        model, policy_gradient_loss(old, advantage, torch.zeros_like(advantage), normalize=False)
    )
    replayed = model(inputs, mask, policy=Replayed(sampling.draws))
    clipped = parser_gradient(
        model, clipped_policy_loss(replayed.action_log_probs.sum(dim=1), old.detach(), advantage)
    )
    assert reinforce.abs().sum() > 0
    torch.testing.assert_close(clipped, reinforce, rtol=1e-12, atol=1e-14)


def test_the_clipped_surrogate_on_a_hand_computed_case():
    """Ratios 0.5, 1.1, 1.5, 1.5 with advantages 1, 1, 1, -1 and clip 0.2: the terms are
    min(r A, clip(r) A) = 0.5, 1.1, 1.2, -1.5; the third is clipped (no gradient), the others
    have gradient d(r A)/d log p = r A."""
    ratio = torch.tensor([0.5, 1.1, 1.5, 1.5], dtype=torch.float64)
    advantage = torch.tensor([1.0, 1.0, 1.0, -1.0], dtype=torch.float64)
    log_probs = torch.log(ratio).requires_grad_()
    old = torch.zeros(4, dtype=torch.float64)
    loss = clipped_policy_loss(log_probs, old, advantage, clip=0.2)
    assert float(loss.detach()) == pytest.approx(-(0.5 + 1.1 + 1.2 - 1.5) / 4, abs=1e-15)
    loss.backward()
    expected = -torch.tensor([0.5, 1.1, 0.0, -1.5], dtype=torch.float64) / 4
    torch.testing.assert_close(log_probs.grad, expected, rtol=1e-15, atol=1e-15)
    # The entropy bonus comes off the loss.
    with_entropy = clipped_policy_loss(
        log_probs,
        old,
        advantage,
        entropy=torch.full((4,), 2.0, dtype=torch.float64),
        entropy_weight=0.1,
    )
    assert float(with_entropy) == pytest.approx(float(loss) - 0.2, abs=1e-15)


def test_further_updates_raise_the_probability_of_the_better_trees():
    """A few steps on the clipped surrogate (plain gradient descent on the parser alone) move
    log p of each tree in its advantage's direction on the whole: sum A (log p_new - log p_old)
    grows, and no ratio runs far past the clip."""
    model, inputs, mask = setup()
    sampling, sampled = sampled_pass(model, inputs, mask)
    old = sampled.action_log_probs.sum(dim=1).detach()
    advantage = torch.linspace(-1.0, 1.0, len(LENGTHS), dtype=torch.float64)
    optimizer = torch.optim.SGD(model.parser_parameters(), lr=0.05)
    others = [p.detach().clone() for n, p in model.named_parameters() if "tracker" not in n]
    for _ in range(4):
        optimizer.zero_grad()
        replayed = model(inputs, mask, policy=Replayed(sampling.draws))
        clipped_policy_loss(replayed.action_log_probs.sum(dim=1), old, advantage).backward()
        optimizer.step()
    new = model(inputs, mask, policy=Replayed(sampling.draws)).action_log_probs.sum(dim=1)
    assert float((advantage * (new - old)).sum()) > 0
    assert float((new - old).exp().max()) < 2.0
    # Only the parser moved.
    after = [p.detach() for n, p in model.named_parameters() if "tracker" not in n]
    assert all(torch.equal(a, b) for a, b in zip(others, after))
