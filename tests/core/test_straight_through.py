"""Straight-through Gumbel-softmax on the soft stack (`StraightThroughGumbel`): the forward
pass is the discrete stack on the moves drawn, the moves are samples of the parser's softmax,
and the gradient is the Gumbel softmax's, checked against its derivative written out."""

import math
import random
from typing import List

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.policies import Given, Step, StraightThroughGumbel
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch


def parser(input_dim=5, hidden_dim=4, scale=2.0):
    model = Spinn(input_dim, hidden_dim, tracking_dim=3, predict_transitions=True).double()
    with torch.no_grad():  # larger weights: probabilities far from 1/2
        for parameter in model.parameters():
            parameter.mul_(scale)
    return model


@pytest.mark.parametrize("temperature", [1.0, 0.3])
def test_the_forward_pass_is_the_discrete_stack_on_the_moves_drawn(temperature):
    """Strengths exactly 0 or 1, the moves a valid tree of every sentence (lengths 0-100), and
    the sentence and every node what the thin stack computes on the same transitions (float64;
    1e-10 claims equality)."""
    torch.manual_seed(0)
    rng = random.Random(0)
    model = parser()
    lengths = [1, 2, 5, 0, 17, 40, 3, 100, 64]
    inputs, mask, _ = make_batch(lengths, 5, rng, "cpu", torch.float64)
    drawn = model(inputs, mask, None, policy=StraightThroughGumbel(temperature), return_nodes=True)
    assert drawn.mode == "straight_through"
    assert torch.equal(drawn.reduce_strengths, (drawn.transitions == tr.REDUCE).double())
    for row, n in zip(drawn.transitions.tolist(), lengths):
        sequence = [t for t in row if t != tr.PAD]
        assert tr.is_valid(sequence, n) if n else sequence == []
    followed = model(inputs, mask, drawn.transitions, policy=Given(), return_nodes=True)
    torch.testing.assert_close(drawn.sentence, followed.sentence, atol=1e-10, rtol=0)
    real = drawn.transitions != tr.PAD
    torch.testing.assert_close(
        drawn.node_states[real], followed.node_states[real], atol=1e-10, rtol=0
    )


def test_moves_are_samples_of_the_parsers_softmax():
    """The Gumbel-max trick: with p(REDUCE) = 3/4, about 3/4 of the strengths are 1 (20,000
    draws: standard deviation 0.0031, tolerance 5 of them), each exactly 0 or 1."""
    torch.manual_seed(1)
    draws = 20_000
    logits = torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64).expand(draws, 2)
    step = Step(0, logits, None, given=None, given_types=None)
    strengths = StraightThroughGumbel(0.5).reduce_strength(step)
    assert set(strengths.unique().tolist()) <= {0.0, 1.0}
    assert abs(float(strengths.mean()) - 0.75) < 5 * math.sqrt(0.75 * 0.25 / draws)


class RecordedGumbel(StraightThroughGumbel):
    """StraightThroughGumbel that keeps each step's logits, noise and strength, with their
    gradients."""

    def __init__(self, temperature: float) -> None:
        super().__init__(temperature)
        self.logits: List[torch.Tensor] = []
        self.noise: List[torch.Tensor] = []
        self.strengths: List[torch.Tensor] = []

    def gumbel_noise(self, logits):
        logits.retain_grad()
        self.logits.append(logits)
        self.noise.append(super().gumbel_noise(logits))
        return self.noise[-1]

    def reduce_strength(self, step):
        strength = super().reduce_strength(step)
        strength.retain_grad()
        self.strengths.append(strength)
        return strength


def test_the_gradient_is_the_gumbel_softmaxs():
    """Each step's strength r_t is the Gumbel-max move in value, and its gradient reaches the
    parser's logits as the Gumbel softmax's would: with s = softmax((logits_t + g_t) / tau)
    at REDUCE, dLoss/dlogits_t = dLoss/dr_t * (-s(1 - s), s(1 - s)) / tau (SHIFT, REDUCE).
    (dLoss/dr_t is the total derivative: r_t also moves later steps' logits, through the stack
    the tracker reads.)"""
    torch.manual_seed(2)
    rng = random.Random(2)
    model = parser()
    inputs, mask, _ = make_batch([6, 3, 9], 5, rng, "cpu", torch.float64)
    target = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    tau = 0.7
    policy = RecordedGumbel(tau)
    out = model(inputs, mask, None, policy=policy)
    (out.sentence * target).sum().backward()
    checked = 0
    for logits, noise, strength in zip(policy.logits, policy.noise, policy.strengths):
        perturbed = logits.detach() + noise
        hard = (perturbed[:, tr.REDUCE] > perturbed[:, tr.SHIFT]).double()
        assert torch.equal(strength.detach(), hard)
        s = torch.softmax(perturbed / tau, dim=1)[:, tr.REDUCE]
        slope = strength.grad * s * (1 - s) / tau
        expected = torch.stack([-slope, slope], dim=1)
        torch.testing.assert_close(logits.grad, expected, atol=1e-14, rtol=1e-12)
        checked += int((strength.grad != 0).sum())
    assert checked > 5  # the loss depends on several steps' strengths
