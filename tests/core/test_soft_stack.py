"""The soft stack (NSHRDLU Models 3-4): Grefenstette et al.'s continuous stack equations, the
discrete thin stack when strengths are one-hot, gradients that reach the parser, batching that
changes nothing, and memory linear in the number of steps."""

import gc
import random
import weakref

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.compositions import registered_compositions
from spinn_core.output import GIVEN, SOFT
from spinn_core.policies import SoftStrengths
from spinn_core.runners.soft_stack import second_unit_weights
from spinn_core.spinn import Spinn
from spinn_core.supervision import transition_loss
from spinn_core.testing import (
    make_batch,
    policy_for_mode,
    recording_tapes,
    saved_for_backward_bytes,
)
from spinn_core.testing.reference import reference_soft_spinn

COMPOSITIONS = registered_compositions()


def parser(input_dim=5, hidden_dim=4, composition="treelstm", scale=1.0):
    model = Spinn(
        input_dim, hidden_dim, tracking_dim=3, predict_transitions=True, composition=composition
    ).double()
    with torch.no_grad():  # larger weights: strengths far from 1/2, stacks far from uniform
        for parameter in model.parameters():
            parameter.mul_(scale)
    return model


def gradients(model, *tensors):
    return [p.grad.clone() for p in model.parameters()] + [t.grad.clone() for t in tensors]


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_one_hot_strengths_compute_the_thin_stack(composition):
    """Driven by the one-hot strengths of valid transitions, the soft stack computes exactly
    what the discrete thin stack computes (float64; 1e-10 claims equality): sentence, every
    node pushed, the parser's logits, and the gradients of every parameter and input."""
    torch.manual_seed(0)
    rng = random.Random(0)
    model = parser(composition=composition, scale=2.0)
    lengths = [1, 2, 5, 0, 17, 40, 3]
    inputs, mask, transitions = make_batch(lengths, 5, rng, "cpu", torch.float64)
    results = []
    for mode in (GIVEN, SOFT):
        model.zero_grad()
        words = inputs.clone().requires_grad_(True)
        out = model(words, mask, transitions, policy=policy_for_mode(mode), return_nodes=True)
        weights = torch.randn_like(out.node_hidden, generator=torch.Generator().manual_seed(1))
        real = (transitions[:, : out.node_hidden.size(1)] != tr.PAD).unsqueeze(-1)
        loss = (
            out.sentence.pow(2).sum()
            + (out.node_hidden * weights * real).sum()
            + transition_loss(out, transitions)
        )
        loss.backward()
        results.append((out, gradients(model, words)))
    (discrete, discrete_grads), (soft, soft_grads) = results
    torch.testing.assert_close(soft.sentence, discrete.sentence, atol=1e-10, rtol=0)
    assert torch.equal(soft.transitions, discrete.transitions)
    real = transitions[:, : soft.transitions.size(1)] != tr.PAD
    torch.testing.assert_close(
        soft.node_states[real], discrete.node_states[real], atol=1e-10, rtol=0
    )
    torch.testing.assert_close(
        soft.transition_logits[real], discrete.transition_logits[real], atol=1e-10, rtol=0
    )
    for a, b in zip(soft_grads, discrete_grads):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=0)
    assert torch.equal(soft.reduce_strengths, (soft.transitions == tr.REDUCE).double())


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_soft_strengths_follow_grefenstettes_equations(composition):
    """With the parser's own (soft) probabilities, the batched soft stack (levels, pointer top,
    sparse second read, custom backward) equals a plain element-by-element implementation of
    Grefenstette et al.'s strength update and read equations: outputs and every gradient."""
    torch.manual_seed(1)
    rng = random.Random(1)
    model = parser(composition=composition, scale=3.0)
    lengths = [9, 1, 4, 2, 13]
    inputs, mask, _ = make_batch(lengths, 5, rng, "cpu", torch.float64)
    model.zero_grad()
    words = inputs.clone().requires_grad_(True)
    out = model(words, mask, None, policy=SoftStrengths())
    out.sentence.pow(2).sum().backward()
    batched = gradients(model, words)
    strengths = out.reduce_strengths[out.transitions != tr.PAD]
    assert ((strengths > 0.05) & (strengths < 0.95)).float().mean() > 0.5  # soft, really

    model.zero_grad()
    words = inputs.clone().requires_grad_(True)
    reference = torch.stack(
        [reference_soft_spinn(model, words[b, :n]) for b, n in enumerate(lengths)]
    )
    reference.pow(2).sum().backward()
    torch.testing.assert_close(out.sentence, reference, atol=1e-10, rtol=0)
    for a, b in zip(batched, gradients(model, words)):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=0)


def test_gradients_match_finite_differences():
    """With respect to the words and to the parser's weights: the path from the strengths
    (levels, the sparse second read's custom backward, the buffer's interpolation) too."""
    torch.manual_seed(2)
    rng = random.Random(2)
    model = parser(3, 2, scale=3.0)
    inputs, mask, _ = make_batch([6, 3, 5], 3, rng, "cpu", torch.float64)

    def encode(words, classifier):
        replaced = {"tracker.transition_classifier.weight": classifier}
        return torch.func.functional_call(
            model, replaced, (words, mask), {"policy": SoftStrengths()}
        ).sentence

    words = inputs.clone().requires_grad_(True)
    classifier = model.tracker.transition_classifier.weight.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(encode, (words, classifier), eps=1e-6, atol=1e-6)


def test_the_task_loss_reaches_the_parser():
    """Model 4: with no transition loss, the label's loss alone trains the parser on the soft
    stack; on the discrete stack it cannot (argmax decisions pass no gradient)."""
    torch.manual_seed(3)
    rng = random.Random(3)
    model = parser(scale=2.0)
    inputs, mask, transitions = make_batch([8, 5, 11], 5, rng, "cpu", torch.float64)
    for mode, reaches in ((SOFT, True), ("predicted", False)):
        model.zero_grad()
        model(inputs, mask, None, policy=policy_for_mode(mode)).sentence.sum().backward()
        grad = model.tracker.transition_classifier.weight.grad
        assert (grad is not None and bool(grad.abs().sum() > 1e-6)) == reaches, mode


def test_batch_equals_single():
    torch.manual_seed(4)
    rng = random.Random(4)
    model = parser(9, 8, scale=2.0).eval()
    lengths = [7, 1, 12, 2, 30, 5]
    inputs, mask, _ = make_batch(lengths, 9, rng, "cpu", torch.float64)
    batch = model(inputs, mask, None, policy=SoftStrengths(), return_nodes=True)
    for b, n in enumerate(lengths):
        single = model(
            inputs[b : b + 1, :n],
            mask[b : b + 1, :n],
            None,
            policy=SoftStrengths(),
            return_nodes=True,
        )
        steps = 2 * n - 1
        torch.testing.assert_close(batch.sentence[b : b + 1], single.sentence, atol=1e-10, rtol=0)
        assert torch.equal(batch.transitions[b, :steps], single.transitions[0, :steps])
        assert (batch.transitions[b, steps:] == tr.PAD).all()
        for name in ("node_states", "transition_logits", "reduce_strengths"):
            torch.testing.assert_close(
                getattr(batch, name)[b, :steps],
                getattr(single, name)[0, :steps],
                atol=1e-10,
                rtol=0,
            )


@pytest.mark.parametrize("bias", [-30.0, 30.0, 0.0])
def test_preferred_tree_is_a_tree(bias):
    """The discrete tree the soft pass prefers is always a valid tree; a parser that always
    prefers REDUCE gives the left-branching tree, one that prefers SHIFT the right-branching
    one (legal moves forced)."""
    torch.manual_seed(5)
    rng = random.Random(5)
    model = parser(scale=2.0)
    with torch.no_grad():
        model.tracker.transition_classifier.bias.copy_(torch.tensor([0.0, bias]))
    lengths = [rng.randint(1, 25) for _ in range(20)]
    inputs, mask, _ = make_batch(lengths, 5, rng, "cpu", torch.float64)
    out = model(inputs, mask, None, policy=SoftStrengths())
    for row, n in zip(out.transitions.tolist(), lengths):
        sequence = [t for t in row if t != tr.PAD]
        assert tr.is_valid(sequence, n)
        if bias > 0:
            assert sequence == tr.left_branching_transitions(n)
        elif bias < 0:
            assert sequence == tr.right_branching_transitions(n)


def test_second_unit_weights_by_hand():
    # Elements pushed at levels 0, 1, 2, then a step popping 1.5 units (level 1.5): element 2
    # is gone, element 1 keeps [1, 1.5]; the second unit [0.5, 1.5] is half of element 0 and
    # all of what is left of element 1.
    weights = second_unit_weights(torch.tensor([[0.0, 1.0, 2.0, 1.5]], dtype=torch.float64))
    assert weights.tolist() == [[0.5, 0.5, 0.0]]
    # A discrete stack: S S S R -> levels 0, 1, 2, 1; the second unit is element 0.
    weights = second_unit_weights(torch.tensor([[0.0, 1.0, 2.0, 1.0]], dtype=torch.float64))
    assert weights.tolist() == [[1.0, 0.0, 0.0]]


def saved_bytes(num_words):
    torch.manual_seed(6)
    rng = random.Random(6)
    model = Spinn(16, 16, tracking_dim=8, predict_transitions=True)
    inputs, mask, _ = make_batch([num_words] * 4, 16, rng, "cpu")

    def step():
        out = model(inputs, mask, None, policy=SoftStrengths())
        return out.sentence.sum() + out.transition_logits.sum()

    return saved_for_backward_bytes(step)


def test_saved_memory_is_linear_in_steps():
    # T grows 4x (49 -> 199 steps): linear memory gives ~4x; keeping every step's strengths
    # (a (B, t) vector per step) would grow ~16x in that term.
    ratio = saved_bytes(100) / saved_bytes(25)
    assert 3.0 < ratio < 5.0, ratio


def test_nothing_outlives_a_training_step():
    model = parser()
    rng = random.Random(7)
    inputs, mask, _ = make_batch([6, 3, 9], 5, rng, "cpu", torch.float64)
    gc.disable()
    try:
        with recording_tapes() as tapes:
            out = model(inputs, mask, None, policy=SoftStrengths(), return_nodes=True)
        (out.sentence.sum() + out.node_hidden.sum()).backward()
        assert len(tapes) == 2  # node values and levels
        refs = [weakref.ref(t) for t in tapes] + [weakref.ref(t.table) for t in tapes]
        del out, tapes
        assert all(ref() is None for ref in refs)
    finally:
        gc.enable()


def test_soft_mode_needs_a_parser_and_whole_trees():
    rng = random.Random(8)
    inputs, mask, transitions = make_batch([4, 2], 5, rng, "cpu", torch.float64)
    with pytest.raises(ValueError, match="needs a parser"):
        Spinn(5, 4, tracking_dim=3).double()(inputs, mask, None, policy=SoftStrengths())
    empty = parser()(inputs[:0], mask[:0], None, policy=SoftStrengths())
    assert empty.sentence.shape == (0, 4)
