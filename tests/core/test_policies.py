"""Transition policies: what each chooses, the log-probabilities and entropies a sampling
policy reports, and a policy written in a few lines running through the core unchanged."""

import json
import math
import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.output import Mode
from spinn_core.policies import (
    Choice,
    Given,
    Greedy,
    Mixed,
    Sampled,
    SoftStrengths,
    Step,
    TransitionPolicy,
)
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
from spinn_core.transitions import PAD, REDUCE, SHIFT


class ReduceWhenLegal(TransitionPolicy):
    """REDUCE whenever two items are on the stack: left-branching trees."""

    mode = "reduce_when_legal"
    needs_parser = False

    def choose(self, step: Step) -> Choice:
        must_shift, _ = step.forced()
        return Choice(torch.where(must_shift, SHIFT, REDUCE))


def forced_step(logits, must_shift, must_reduce):
    must_shift, must_reduce = torch.tensor(must_shift), torch.tensor(must_reduce)
    return Step(
        0,
        torch.tensor(logits, dtype=torch.float64),
        None,
        None,
        None,
        legality=lambda: (must_shift, must_reduce),
    )


def test_a_policy_of_our_own_runs_through_the_thin_stack():
    torch.manual_seed(0)
    rng = random.Random(0)
    model = Spinn(5, 4).double()
    lengths = [1, 2, 3, 7]
    inputs, mask, _ = make_batch(lengths, 5, rng, "cpu", torch.float64)
    out = model(inputs, mask, policy=ReduceWhenLegal())
    assert out.mode == "reduce_when_legal"
    left = [tr.left_branching_transitions(n) for n in lengths]
    width = max(len(t) for t in left)
    expected = torch.tensor([t + [PAD] * (width - len(t)) for t in left])
    assert torch.equal(out.transitions, expected)
    # The same trees given: the same sentence vectors.
    given = model(inputs, mask, expected, policy=Given())
    torch.testing.assert_close(out.sentence, given.sentence, atol=1e-12, rtol=0)


def test_sampled_log_probability_and_entropy_by_hand():
    # p(REDUCE) = 3/4 at a free step; a forced step has probability 1 and entropy 0.
    step = forced_step([[0.0, math.log(3.0)], [5.0, -5.0]], [False, True], [False, False])
    torch.manual_seed(0)
    choice = Sampled().choose(step)
    assert choice.action[1] == SHIFT
    expected = math.log(0.75) if choice.action[0] == REDUCE else math.log(0.25)
    assert choice.log_prob.tolist() == pytest.approx([expected, 0.0], abs=1e-12)
    entropy = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert choice.entropy.tolist() == pytest.approx([entropy, 0.0], abs=1e-12)


def test_sampled_gradients_are_finite_at_forced_steps():
    logits = torch.tensor([[1.0, 2.0], [0.5, -0.5]], dtype=torch.float64, requires_grad=True)
    step = Step(0, logits, None, None, None, lambda: (torch.tensor([True, False]),) * 2)
    choice = Sampled().choose(step)
    (choice.log_prob.sum() + choice.entropy.sum()).backward()
    assert torch.isfinite(logits.grad).all()
    assert logits.grad[0].tolist() == [0.0, 0.0]  # forced: nothing to learn


def test_sampled_draws_follow_the_parser_distribution():
    step = forced_step([[0.0, math.log(3.0)]] * 20000, [False] * 20000, [False] * 20000)
    torch.manual_seed(1)
    share = Sampled().choose(step).action.double().mean().item()
    assert share == pytest.approx(0.75, abs=0.02)  # 5 standard deviations: 0.0153


def test_sampled_pass_reports_the_log_probability_of_its_tree():
    """Summed over steps, the sampled pass's log-probabilities are the log-probability of the
    tree it built under the parser's legal-move distribution, recomputed here by following
    the same transitions with the given policy (same logits, since the tracker sees the same
    stack)."""
    torch.manual_seed(3)
    rng = random.Random(3)
    model = Spinn(5, 4, tracking_dim=3, predict_transitions=True).double()
    lengths = [6, 1, 4, 2]
    inputs, mask, _ = make_batch(lengths, 5, rng, "cpu", torch.float64)
    sampled = model(inputs, mask, policy=Sampled())
    assert sampled.mode == Mode.SAMPLED
    for b, n in enumerate(lengths):
        assert tr.is_valid([t for t in sampled.transitions[b].tolist() if t != PAD], n)
    replay = model(inputs, mask, sampled.transitions, policy=Given())
    torch.testing.assert_close(replay.sentence, sampled.sentence, atol=1e-12, rtol=0)
    total = torch.zeros(len(lengths), dtype=torch.float64)
    for b, n in enumerate(lengths):
        depth, shifted = 0, 0
        for t, action in enumerate(sampled.transitions[b].tolist()[: 2 * n - 1]):
            logits = replay.transition_logits[b, t]
            legal = [shifted < n, depth >= 2]  # SHIFT needs a word, REDUCE two items
            if all(legal):
                total[b] += torch.log_softmax(logits, dim=-1)[action]
            depth += 1 if action == SHIFT else -1
            shifted += action == SHIFT
    torch.testing.assert_close(sampled.action_log_probs.sum(dim=1), total, atol=1e-12, rtol=0)
    assert (sampled.action_entropy >= 0).all()


def test_modes_name_their_policies_and_compare_as_strings():
    assert isinstance(Given(), Given)
    assert isinstance(Greedy(), Greedy)
    assert isinstance(Mixed(0.5), Mixed)
    assert isinstance(SoftStrengths(), SoftStrengths)
    assert isinstance(Sampled(), Sampled)
    assert Mode.GIVEN == "given" and json.dumps({"mode": Mode.SOFT}) == '{"mode": "soft"}'
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Mixed(1.5)


def test_a_policy_that_needs_a_parser_says_which_setting_to_change():
    with pytest.raises(ValueError, match="predict_transitions=true"):
        Spinn(4, 3, tracking_dim=2)(torch.randn(1, 2, 4), torch.ones(1, 2), policy=Sampled())
