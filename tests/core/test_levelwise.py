"""Level-wise batching (one composition per tree height) against the sequential thin stack:
same outputs, same gradients, max-height composition calls, memory still linear."""

import copy
import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.compositions import registered_compositions
from spinn_core.output import GIVEN
from spinn_core.policies import Given
from spinn_core.runners import run_levelwise
from spinn_core.spinn import Spinn
from spinn_core.testing import (
    LinearMagnitudes,
    gradient_tolerance,
    make_batch,
    random_transitions,
    saved_for_backward_bytes,
    tree_height,
    unit_roundoff,
    value_tolerance,
)

COMPOSITIONS = registered_compositions()


# The policy the paths follow given trees with (the paper's left-padded forests need theirs).
GIVEN_TREES = Given()


def sequential(model, inputs, mask, transitions, policy=GIVEN_TREES):
    return model(inputs, mask, transitions, return_nodes=True, policy=policy)


def levelwise(model, inputs, mask, transitions, policy=GIVEN_TREES):
    return model(inputs, mask, transitions, return_nodes=True, runner=run_levelwise, policy=policy)


def run(path, model, inputs, mask, transitions, weights=None, seed=0, policy=GIVEN_TREES):
    """Output and gradients (by parameter name, and of the inputs) of one path on a loss that
    touches the sentence vectors and every node. The seed makes dropout draw the same masks;
    ``weights`` (drawn on first use) weigh the loss's terms."""
    model.zero_grad()
    x = inputs.clone().requires_grad_()
    torch.manual_seed(seed)
    out = path(model, x, mask, transitions, policy)
    if weights is None:
        generator = torch.Generator().manual_seed(1234)
        weights = (
            torch.randn(out.sentence.shape, generator=generator),
            torch.randn(out.node_states.shape, generator=generator),
        )
    weights = tuple(w.to(out.sentence) for w in weights)
    loss = (out.sentence * weights[0]).sum() + (out.node_states * weights[1]).sum()
    loss.backward()
    grads = {
        name: torch.zeros_like(p) if p.grad is None else p.grad.clone()
        for name, p in model.named_parameters()
    }
    return out, grads, x.grad, weights


def assert_same(model, inputs, mask, transitions, atol=1e-10, policy=GIVEN_TREES):
    """Both paths in float64: equal up to rounding (~1e-15 here; 1e-10 claims equality)."""
    seq, seq_grads, seq_x, weights = run(
        sequential, model, inputs, mask, transitions, policy=policy
    )
    lvl, lvl_grads, lvl_x, _ = run(
        levelwise, model, inputs, mask, transitions, weights, policy=policy
    )
    assert torch.equal(lvl.transitions, seq.transitions)
    assert lvl.transition_logits is None and lvl.mode == GIVEN
    for name in ("sentence", "node_states", "node_hidden"):
        torch.testing.assert_close(getattr(lvl, name), getattr(seq, name), atol=atol, rtol=0)
    for name in seq_grads:
        torch.testing.assert_close(lvl_grads[name], seq_grads[name], atol=atol, rtol=0)
    torch.testing.assert_close(lvl_x, seq_x, atol=atol, rtol=0)
    return seq, lvl


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_equals_sequential_on_random_trees(composition, device):
    torch.manual_seed(0)
    rng = random.Random(0)
    model = Spinn(7, 6, levelwise=False, composition=composition).double().to(device)
    for _ in range(8):
        lengths = [rng.randint(1, 60) for _ in range(rng.randint(1, 12))]
        inputs, mask, transitions = make_batch(lengths, 7, rng, device, torch.float64)
        assert_same(model, inputs, mask, transitions)


def test_float32_paths_are_within_rounding_of_float64(device):
    """Both float32 paths against the float64 result of the same parameters and inputs, each
    element allowed what float32 rounding can explain (first-order bounds, see
    spinn_core/testing/tolerances.py), with the magnitudes measured in the float64 run.
    The two paths compose in different batch shapes, so BLAS rounds them differently, and
    differently on different CPUs: a fixed tolerance failed on an AMD EPYC machine (1.9e-6 on
    a gradient element near 0.03, against 1e-6 allowed).

    The longest chains in this batch: the 60-word tree has 119 nodes and height
    ``depth <= 59``; each composition is a dot product of fan-in K = 2 * 6 + 1 = 13 followed
    by a few elementwise operations (counted as 5 more roundings), the projection has fan-in
    7 + 1."""
    torch.manual_seed(0)
    rng = random.Random(1)
    lengths = [40, 3, 60, 1, 17]
    model = Spinn(7, 6, levelwise=False).to(device)
    inputs, mask, transitions = make_batch(lengths, 7, rng, device)
    reference_model = copy.deepcopy(model).double()
    # The magnitudes are measured on the level-wise path, whose composition is the module's
    # forward (nn.Linear hooks); the thin stack's loop runs the same products through
    # ``compose.loop()`` (test_equals_sequential_on_random_trees: equal in float64).
    with LinearMagnitudes(reference_model) as magnitudes:
        ref, ref_grads, ref_x, weights = run(
            levelwise, reference_model, inputs.double(), mask, transitions
        )

    depth = max(tree_height(row) for row in transitions.tolist())
    fan_in = 2 * 6 + 1
    nodes = 2 * max(lengths) - 1
    # Node states: c adds up its children's c, so a root's error gathers the rounding of every
    # composition below it (<= nodes of them), each amplified by at most 1 + max|c|.
    largest_c = float(ref.node_states[..., 6:].detach().abs().max())
    state_tolerance = value_tolerance(
        nodes, fan_in + 5, magnitudes.largest_preactivation, growth=1 + largest_c
    )
    # A gradient element sums one term per node (or leaf) that uses the parameter; each term's
    # own error comes from backpropagating through at most ``depth`` compositions.
    term_error_steps = depth * (fan_in + 5)
    # Input gradients: dL/dx = W^T dL/dy of the projection (fan-in 2D = 12), one row per word.
    (word_sums,) = magnitudes.input_gradient["projection.linear"]
    input_sums = torch.zeros_like(ref_x)
    input_sums[mask] = word_sums
    input_tolerance = ((12 + term_error_steps) * unit_roundoff(torch.float32)) * input_sums

    for path in (sequential, levelwise):
        out, grads, x_grad, _ = run(path, model, inputs, mask, transitions, weights)
        for name in ("sentence", "node_states"):
            error = (getattr(out, name).double() - getattr(ref, name)).abs().max()
            assert error <= state_tolerance, (path.__name__, name, float(error), state_tolerance)
        for name, grad in grads.items():
            allowed = gradient_tolerance(magnitudes, name, term_error_steps)
            error = (grad.double() - ref_grads[name]).abs()
            assert (error <= allowed).all(), (path.__name__, name, float((error - allowed).max()))
        assert ((x_grad.double() - ref_x).abs() <= input_tolerance).all(), path.__name__


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_equals_sequential_with_dropout_and_batch_norm(composition):
    # Both paths project the whole padded batch once, so the same seed gives the same leaves.
    torch.manual_seed(0)
    rng = random.Random(2)
    model = (
        Spinn(
            7,
            6,
            levelwise=False,
            composition=composition,
            projection_dropout=0.3,
            projection_batch_norm=True,
        )
        .double()
        .train()
    )
    inputs, mask, transitions = make_batch([5, 1, 22, 9], 7, rng, "cpu", torch.float64)
    assert_same(model, inputs, mask, transitions)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_one_two_and_empty_sentences(composition, device):
    torch.manual_seed(0)
    rng = random.Random(3)
    model = Spinn(4, 3, levelwise=False, composition=composition).double().to(device)
    for lengths in ([1], [2], [0], [1, 2], [0, 1, 2, 0, 5], [0, 0]):
        inputs, mask, transitions = make_batch(lengths, 4, rng, device, torch.float64)
        seq, lvl = assert_same(model, inputs, mask, transitions)
        for b, n in enumerate(lengths):
            if n == 0:
                assert torch.equal(lvl.sentence[b], torch.zeros_like(lvl.sentence[b]))


def test_empty_batch():
    model = Spinn(4, 3, levelwise=False)
    inputs, mask = torch.randn(0, 3, 4), torch.zeros(0, 3, dtype=torch.bool)
    transitions = torch.zeros(0, 5, dtype=torch.long)
    seq = model(inputs, mask, transitions)
    lvl = levelwise(model, inputs, mask, transitions)
    assert lvl.sentence.shape == seq.sentence.shape == (0, 3)
    assert lvl.transitions.shape == seq.transitions.shape == (0, 0)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_left_padded_forests(composition, device):
    """The paper's fixed-length mode: pad SHIFTs at the left stay under the sentence's tree."""
    torch.manual_seed(0)
    rng = random.Random(4)
    model = Spinn(5, 4, levelwise=False, composition=composition).double().to(device)
    length = 20
    sequences = []
    for _ in range(10):
        n = rng.randint(1, length + 10)  # some are cropped, most padded
        tokens = [str(i) for i in range(n)]
        sequences.append(tr.crop_pad_left(tokens, random_transitions(n, rng), length, "<p>")[1])
    transitions = torch.tensor(sequences, device=device)
    inputs = torch.randn(len(sequences), length, 5, dtype=torch.float64, device=device)
    mask = torch.ones(len(sequences), length, dtype=torch.bool, device=device)
    for static_shapes in (False, True):  # the thin stack's pointers planned either way
        model.static_shapes = static_shapes
        assert_same(model, inputs, mask, transitions, policy=Given(left_padded=True))


def test_default_tree_when_no_transitions():
    torch.manual_seed(0)
    rng = random.Random(5)
    model = Spinn(4, 3, levelwise=False).double()
    inputs, mask, _ = make_batch([6, 0, 1, 13], 4, rng, "cpu", torch.float64)
    assert_same(model, inputs, mask, None)


def count_compositions(model, forward):
    """Calls of the composition: of its forward (the level-wise path) and of what its
    ``loop()`` gives a pass of the thin stack (a step composes ``onto`` the tape)."""
    calls = []
    handle = model.compose.register_forward_hook(lambda *_: calls.append(1))
    loop = model.compose.loop

    def counted_loop(*args):
        compose = loop(*args)
        onto = compose.onto

        def counted(*args):
            calls.append(1)
            return onto(*args)

        compose.onto = counted
        return compose

    model.compose.loop = counted_loop
    try:
        forward()
    finally:
        handle.remove()
        del model.compose.loop
    return len(calls)


@pytest.mark.parametrize(
    "build,levels",
    [
        (tr.balanced_transitions, 6),  # 64 words: 6 levels, 127 steps
        (tr.left_branching_transitions, 63),
        (tr.right_branching_transitions, 63),
    ],
)
def test_one_composition_per_level(build, levels):
    model = Spinn(4, 3, levelwise=False)
    inputs, mask = torch.randn(2, 64, 4), torch.ones(2, 64, dtype=torch.bool)
    transitions = torch.tensor([build(64)] * 2)
    assert count_compositions(model, lambda: levelwise(model, inputs, mask, transitions)) == levels
    # The sequential thin stack: one composition per step (static shapes), or per REDUCE step
    # when it composes only the reducing sentences (sparse).
    model.static_shapes = True
    assert count_compositions(model, lambda: model(inputs, mask, transitions)) == 127
    model.static_shapes = False
    assert count_compositions(model, lambda: model(inputs, mask, transitions)) == 63


def test_levels_equal_max_tree_height_on_random_batches():
    rng = random.Random(6)
    model = Spinn(4, 3, levelwise=False)
    for _ in range(20):
        lengths = [rng.randint(1, 60) for _ in range(rng.randint(1, 10))]
        inputs, mask, transitions = make_batch(lengths, 4, rng, "cpu")
        expected = max(tree_height(row) for row in transitions.tolist())
        assert (
            count_compositions(model, lambda: levelwise(model, inputs, mask, transitions))
            == expected
        )


def test_tracking_model_is_refused():
    model = Spinn(4, 3, levelwise=False, tracking_dim=2)
    with pytest.raises(ValueError, match="without an extra input"):
        levelwise(
            model,
            torch.randn(1, 2, 4),
            torch.ones(1, 2, dtype=torch.bool),
            torch.tensor([[0, 0, 1]]),
        )


def saved_bytes(num_words):
    """Bytes autograd saves for backward plus the tape, for right-branching trees (as many
    levels as words: O(levels x table) memory would be quadratic here)."""
    torch.manual_seed(0)
    model = Spinn(16, 16)
    inputs = torch.randn(4, num_words, 16)
    mask = torch.ones(4, num_words, dtype=torch.bool)
    transitions = torch.tensor([tr.right_branching_transitions(num_words)] * 4)
    return saved_for_backward_bytes(
        lambda: levelwise(model, inputs, mask, transitions).sentence.sum()
    )


def test_saved_memory_is_linear_in_sentence_length():
    ratio = saved_bytes(100) / saved_bytes(25)
    assert 3.0 < ratio < 5.0, ratio
