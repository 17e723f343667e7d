"""Level-wise batching (one composition per tree height) against the sequential thin stack:
same outputs, same gradients, max-height composition calls, memory still linear."""
import random

import pytest
import torch

from spinn_allennlp.core import transitions as tr
from spinn_allennlp.core.levelwise import levelwise_forward
from spinn_allennlp.core.spinn import GIVEN, Spinn
from spinn_allennlp.core.memory import saved_for_backward_bytes

from tests.core.test_spinn import make_batch, pad_batch, random_transitions

COMPOSITIONS = ["treelstm", "treernn"]


def batch_of(lengths, input_dim, rng, device, dtype=torch.float64):
    """Like ``make_batch``, but lengths may be 0 (an empty sentence: no transitions)."""
    width = max(max(lengths), 1)
    inputs = torch.randn(len(lengths), width, input_dim, dtype=dtype, device=device)
    mask = (torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)).to(device)
    inputs = inputs * mask.unsqueeze(-1)
    sequences = [random_transitions(n, rng) if n else [] for n in lengths]
    transitions = pad_batch([s + [tr.PAD] for s in sequences], tr.PAD)  # >= 1 column
    return inputs, mask, transitions.to(device)


def tree_height(transitions):
    stack = []
    for t in transitions:
        if t == tr.SHIFT:
            stack.append(0)
        elif t == tr.REDUCE:
            right, left = stack.pop(), stack.pop()
            stack.append(1 + max(left, right))
    return max(stack, default=0)


def run_both(model, inputs, mask, transitions, seed=0):
    """Outputs and gradients (parameters, inputs) of both paths on a loss that touches the
    sentence vectors and every node. The seed makes dropout draw the same masks."""
    torch.manual_seed(1234)
    weights = None
    results = []
    for forward in (lambda *a: model(*a, mode=GIVEN, return_nodes=True),
                    lambda *a: levelwise_forward(model, *a, return_nodes=True)):
        model.zero_grad()
        x = inputs.clone().requires_grad_()
        torch.manual_seed(seed)
        out = forward(x, mask, transitions)
        if weights is None:
            weights = (torch.randn_like(out.sentence), torch.randn_like(out.node_states))
        loss = (out.sentence * weights[0]).sum() + (out.node_states * weights[1]).sum()
        loss.backward()
        grads = [torch.zeros_like(p) if p.grad is None else p.grad.clone()
                 for p in model.parameters()]
        results.append((out, grads, x.grad))
    return results


def assert_same(model, inputs, mask, transitions, atol=1e-10, rtol=0.0):
    (seq, seq_grads, seq_x), (lvl, lvl_grads, lvl_x) = run_both(model, inputs, mask, transitions)
    assert torch.equal(lvl.transitions, seq.transitions)
    assert lvl.transition_logits is None and lvl.mode == GIVEN
    for name in ("sentence", "node_states", "node_hidden"):
        torch.testing.assert_close(getattr(lvl, name), getattr(seq, name), atol=atol, rtol=rtol)
    for a, b in zip(lvl_grads, seq_grads):
        torch.testing.assert_close(a, b, atol=atol, rtol=rtol)
    torch.testing.assert_close(lvl_x, seq_x, atol=atol, rtol=rtol)
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


def test_equals_sequential_in_float32(device):
    torch.manual_seed(0)
    rng = random.Random(1)
    model = Spinn(7, 6, levelwise=False).to(device)
    inputs, mask, transitions = make_batch([40, 3, 60, 1, 17], 7, rng, device)
    # Parameter gradients sum over hundreds of nodes in another order: float32 rounding.
    assert_same(model, inputs, mask, transitions, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_equals_sequential_with_dropout_and_batch_norm(composition):
    # Both paths project the whole padded batch once, so the same seed gives the same leaves.
    torch.manual_seed(0)
    rng = random.Random(2)
    model = Spinn(7, 6, levelwise=False, composition=composition, projection_dropout=0.3,
                  projection_batch_norm=True).double().train()
    inputs, mask, transitions = make_batch([5, 1, 22, 9], 7, rng, "cpu", torch.float64)
    assert_same(model, inputs, mask, transitions)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_one_two_and_empty_sentences(composition, device):
    torch.manual_seed(0)
    rng = random.Random(3)
    model = Spinn(4, 3, levelwise=False, composition=composition).double().to(device)
    for lengths in ([1], [2], [0], [1, 2], [0, 1, 2, 0, 5], [0, 0]):
        inputs, mask, transitions = batch_of(lengths, 4, rng, device)
        seq, lvl = assert_same(model, inputs, mask, transitions)
        for b, n in enumerate(lengths):
            if n == 0:
                assert torch.equal(lvl.sentence[b], torch.zeros_like(lvl.sentence[b]))


def test_empty_batch():
    model = Spinn(4, 3, levelwise=False)
    inputs, mask = torch.randn(0, 3, 4), torch.zeros(0, 3, dtype=torch.bool)
    transitions = torch.zeros(0, 5, dtype=torch.long)
    seq = model(inputs, mask, transitions)
    lvl = levelwise_forward(model, inputs, mask, transitions, return_nodes=True)
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
    assert_same(model, inputs, mask, transitions)


def test_default_tree_when_no_transitions():
    torch.manual_seed(0)
    rng = random.Random(5)
    model = Spinn(4, 3, levelwise=False).double()
    inputs, mask, _ = batch_of([6, 0, 1, 13], 4, rng, "cpu")
    assert_same(model, inputs, mask, None)


def count_compositions(model, forward):
    calls = []
    handle = model.compose.register_forward_hook(lambda *_: calls.append(1))
    try:
        forward()
    finally:
        handle.remove()
    return len(calls)


@pytest.mark.parametrize("build,levels", [
    (tr.balanced_transitions, 6),                       # 64 words: 6 levels, 127 steps
    (tr.left_branching_transitions, 63),
    (tr.right_branching_transitions, 63),
])
def test_one_composition_per_level(build, levels):
    model = Spinn(4, 3, levelwise=False)
    inputs, mask = torch.randn(2, 64, 4), torch.ones(2, 64, dtype=torch.bool)
    transitions = torch.tensor([build(64)] * 2)
    assert count_compositions(model, lambda: levelwise_forward(model, inputs, mask,
                                                               transitions)) == levels
    # The sequential thin stack: one composition per step, or per REDUCE step when it composes
    # only the reducing sentences.
    model.sparse_compose = False
    assert count_compositions(model, lambda: model(inputs, mask, transitions)) == 127
    model.sparse_compose = True
    assert count_compositions(model, lambda: model(inputs, mask, transitions)) == 63


def test_levels_equal_max_tree_height_on_random_batches():
    rng = random.Random(6)
    model = Spinn(4, 3, levelwise=False)
    for _ in range(20):
        lengths = [rng.randint(1, 60) for _ in range(rng.randint(1, 10))]
        inputs, mask, transitions = make_batch(lengths, 4, rng, "cpu")
        expected = max(tree_height(row) for row in transitions.tolist())
        assert count_compositions(model, lambda: levelwise_forward(
            model, inputs, mask, transitions)) == expected


@pytest.mark.parametrize("bad,reason", [
    ([[0, 1, 1]], "REDUCE with fewer than two"),
    ([[0, 0, 0]], "number of SHIFTs"),
    ([[0, -1, 0, 1]], "PAD before the end"),
    ([[0, 0, 2]], "unknown transition value"),
])
def test_invalid_transitions_raise_like_sequential(bad, reason):
    model = Spinn(4, 3, levelwise=False)
    inputs, mask = torch.randn(1, 2, 4), torch.ones(1, 2, dtype=torch.bool)
    with pytest.raises(ValueError, match=reason):
        levelwise_forward(model, inputs, mask, torch.tensor(bad))


def test_tracking_model_is_refused():
    model = Spinn(4, 3, levelwise=False, tracking_dim=2)
    with pytest.raises(ValueError, match="without tracking"):
        levelwise_forward(model, torch.randn(1, 2, 4), torch.ones(1, 2, dtype=torch.bool),
                          torch.tensor([[0, 0, 1]]))


def saved_bytes(num_words):
    """Bytes autograd saves for backward plus the tape, for right-branching trees (as many
    levels as words: O(levels x table) memory would be quadratic here)."""
    torch.manual_seed(0)
    model = Spinn(16, 16)
    inputs = torch.randn(4, num_words, 16)
    mask = torch.ones(4, num_words, dtype=torch.bool)
    transitions = torch.tensor([tr.right_branching_transitions(num_words)] * 4)
    return saved_for_backward_bytes(
        lambda: levelwise_forward(model, inputs, mask, transitions).sentence.sum())


def test_saved_memory_is_linear_in_sentence_length():
    ratio = saved_bytes(100) / saved_bytes(25)
    assert 3.0 < ratio < 5.0, ratio
