"""Node inputs (Chen et al. 2017, eq. 3-10): every tree node takes an input vector of its own,
in the level-wise path and the sequential one; leaves as eq. 4's projection or as the cell with
no children. Checked against a node-by-node TreeLSTM (outputs and gradients, float64), between
the two paths, and single sentence against padded batch."""

import random

import pytest
import torch

from spinn_core.compositions import registered_compositions
from spinn_core.policies import Given
from spinn_core.spinn import Spinn
from spinn_core.testing import random_tree_batch, recursive_tree_lstm_nodes

LEAVES = ["cell", "projection"]


def node_model(leaf, levelwise=True, input_dim=5, hidden_dim=4, **kwargs):
    torch.manual_seed(0)
    model = Spinn(
        input_dim, hidden_dim, node_input_dim=input_dim, leaf=leaf, levelwise=levelwise, **kwargs
    )
    return model.double()


def batch_with_node_inputs(lengths, dim, seed=0):
    rng = random.Random(seed)
    generator = torch.Generator().manual_seed(seed)
    batch = random_tree_batch(lengths, dim, rng, dtype=torch.float64, generator=generator)
    steps = batch.transitions.size(1)
    node_inputs = torch.randn(len(lengths), steps, dim, dtype=torch.float64, generator=generator)
    return batch, node_inputs


def run(model, inputs, mask, transitions, node_inputs, weights):
    """Node states and the gradients of a weighted sum of them (parameters, words, node inputs)."""
    model.zero_grad()
    inputs = inputs.clone().requires_grad_()
    node_inputs = node_inputs.clone().requires_grad_()
    out = model(
        inputs, mask, transitions, policy=Given(), return_nodes=True, node_inputs=node_inputs
    )
    real = (transitions[:, : out.node_states.size(1)] != -1).unsqueeze(-1)
    loss = (out.node_states * weights[:, : out.node_states.size(1)] * real).sum()
    loss.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters()}
    return out, grads, inputs.grad, node_inputs.grad


@pytest.mark.parametrize("leaf", LEAVES)
@pytest.mark.parametrize("levelwise", [True, False], ids=["levelwise", "sequential"])
def test_every_node_equals_node_by_node_reference(leaf, levelwise):
    model = node_model(leaf, levelwise)
    lengths = [1, 2, 7, 13, 30, 4]
    batch, node_inputs = batch_with_node_inputs(lengths, 5)
    weights = torch.randn(*batch.transitions.shape, model.node_dim, dtype=torch.float64)
    out, grads, word_grad, node_grad = run(
        model, batch.inputs, batch.mask, batch.transitions, node_inputs, weights
    )

    model.zero_grad()
    words = batch.inputs.clone().requires_grad_()
    per_node = node_inputs.clone().requires_grad_()
    reference_loss = 0
    for b, (length, tree) in enumerate(zip(lengths, batch.trees)):
        nodes = recursive_tree_lstm_nodes(model, words[b, :length], tree, per_node[b])
        assert nodes.shape == (2 * length - 1, model.node_dim)
        torch.testing.assert_close(out.node_states[b, : 2 * length - 1], nodes, atol=1e-10, rtol=0)
        # The root is the sentence vector.
        torch.testing.assert_close(out.sentence[b], nodes[-1, :4], atol=1e-10, rtol=0)
        reference_loss = reference_loss + (nodes * weights[b, : 2 * length - 1]).sum()
    reference_loss.backward()
    for name, parameter in model.named_parameters():
        torch.testing.assert_close(grads[name], parameter.grad, atol=1e-10, rtol=0)
    torch.testing.assert_close(word_grad, words.grad, atol=1e-10, rtol=0)
    torch.testing.assert_close(node_grad, per_node.grad, atol=1e-10, rtol=0)
    # Leaves' own rows of node_inputs are unused: their input is the word.
    leaves = batch.transitions == 0
    assert float(node_grad[leaves].abs().max()) == 0.0
    assert float(node_grad[batch.transitions == 1].abs().max()) > 0.0


@pytest.mark.parametrize("composition", registered_compositions())
@pytest.mark.parametrize("leaf", LEAVES)
def test_levelwise_equals_sequential_with_node_inputs(leaf, composition):
    """The level-wise path, the step loop composing only the reducing rows (CPU default) and
    the step loop composing every running row (GPU default) agree."""
    lengths = [9, 1, 3, 20, 2, 0, 11]
    batch, node_inputs = batch_with_node_inputs(lengths, 5, seed=3)
    weights = torch.randn(*batch.transitions.shape, 8 if composition == "treelstm" else 4)
    weights = weights.double()
    results = []
    for levelwise, static_shapes in ((True, None), (False, False), (False, True)):
        model = node_model(leaf, levelwise, composition=composition)
        model.static_shapes = static_shapes
        results.append(
            run(model, batch.inputs, batch.mask, batch.transitions, node_inputs, weights)
        )
    (lvl, *lvl_grads), *steps = results
    for seq, *seq_grads in steps:
        torch.testing.assert_close(lvl.node_states, seq.node_states, atol=1e-10, rtol=0)
        torch.testing.assert_close(lvl.sentence, seq.sentence, atol=1e-10, rtol=0)
        for name in lvl_grads[0]:
            torch.testing.assert_close(lvl_grads[0][name], seq_grads[0][name], atol=1e-10, rtol=0)
        for a, b in zip(lvl_grads[1:], seq_grads[1:]):
            torch.testing.assert_close(a, b, atol=1e-10, rtol=0)


@pytest.mark.parametrize(
    "options",
    [
        {"leaf": "cell", "levelwise": True},
        {"leaf": "cell", "levelwise": False},
        {"leaf": "projection", "levelwise": True},
        {"leaf": "projection", "tracking_dim": 3},
    ],
    ids=["cell-levelwise", "cell-sequential", "projection-levelwise", "projection-tracking"],
)
def test_batch_equals_single_with_node_inputs(options):
    """No padding (of words, steps or node inputs) leaks into a sentence."""
    model = node_model(**options).eval()
    lengths = [6, 1, 15, 3]
    batch, node_inputs = batch_with_node_inputs(lengths, 5, seed=5)
    together = model(
        batch.inputs, batch.mask, batch.transitions, return_nodes=True, node_inputs=node_inputs
    )
    for b, length in enumerate(lengths):
        steps = 2 * length - 1
        alone = model(
            batch.inputs[b : b + 1, :length],
            batch.mask[b : b + 1, :length],
            batch.transitions[b : b + 1, :steps],
            return_nodes=True,
            node_inputs=node_inputs[b : b + 1, :steps],
        )
        torch.testing.assert_close(
            together.node_states[b, :steps], alone.node_states[0], atol=1e-10, rtol=0
        )
        torch.testing.assert_close(together.sentence[b], alone.sentence[0], atol=1e-10, rtol=0)


def test_a_node_input_moves_that_node_and_its_ancestors_only():
    model = node_model("cell")
    batch, node_inputs = batch_with_node_inputs([6], 5, seed=7)
    # ( ( a b ) ( ( ( c d ) e ) f ) ): step 5 makes ( c d ), steps 7, 9, 10 its ancestors.
    transitions = torch.tensor([[0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 1]])
    before = model(
        batch.inputs, batch.mask, transitions, return_nodes=True, node_inputs=node_inputs
    )
    for step, expected in ((5, {5, 7, 9, 10}), (2, {2, 10}), (3, set())):
        changed = node_inputs.clone()
        changed[0, step] += 1.0  # step 3 is a SHIFT: a leaf's input is its word, not this
        after = model(batch.inputs, batch.mask, transitions, return_nodes=True, node_inputs=changed)
        moved = (after.node_states - before.node_states).abs().amax(dim=-1)[0] > 0
        assert set(moved.nonzero().flatten().tolist()) == expected


@pytest.mark.parametrize("composition", registered_compositions())
def test_leaf_cell_is_the_cell_with_no_children(composition):
    model = node_model("cell", composition=composition)
    words = torch.randn(3, 5, dtype=torch.float64)
    mask = torch.ones(1, 3, dtype=torch.bool)
    leaves = model.leaves(words.unsqueeze(0), mask)
    zero = torch.zeros(3, model.node_dim, dtype=torch.float64)
    torch.testing.assert_close(leaves, model.compose(zero, zero, words), atol=1e-12, rtol=0)
    assert model.projection is None


def test_one_word_sentences_have_no_levels():
    model = node_model("cell")
    batch, node_inputs = batch_with_node_inputs([1, 1], 5)
    out = model(
        batch.inputs, batch.mask, batch.transitions, return_nodes=True, node_inputs=node_inputs
    )
    torch.testing.assert_close(out.node_states[:, 0], model.leaves(batch.inputs, batch.mask))


def test_node_inputs_are_checked():
    model = node_model("cell")
    batch, node_inputs = batch_with_node_inputs([4, 2], 5)
    with pytest.raises(ValueError, match="node_inputs must be given"):
        model(batch.inputs, batch.mask, batch.transitions)
    for levelwise in (True, False):
        model.levelwise = levelwise
        with pytest.raises(ValueError, match="at least 7 steps"):
            model(batch.inputs, batch.mask, batch.transitions, node_inputs=node_inputs[:, :5])
    with pytest.raises(ValueError, match="node_inputs must be given"):
        Spinn(5, 4).double()(batch.inputs, batch.mask, batch.transitions, node_inputs=node_inputs)
    # Wider node inputs than steps are fine: the extra columns are not read.
    wide = torch.cat([node_inputs, torch.full_like(node_inputs, float("nan"))], dim=1)
    out = model(batch.inputs, batch.mask, batch.transitions, node_inputs=wide)
    assert not out.sentence.isnan().any()


@pytest.mark.parametrize(
    "options, message",
    [
        ({"leaf": "cell", "node_input_dim": 3}, "must equal input_dim"),
        ({"leaf": "cell", "node_input_dim": 5, "tracking_dim": 2}, "without tracking"),
        ({"leaf": "cell", "node_input_dim": 5, "projection_dropout": 0.1}, "leaf='projection'"),
        ({"leaf": "tree"}, "'projection' or 'cell'"),
    ],
)
def test_bad_leaf_options_raise(options, message):
    with pytest.raises(ValueError, match=message):
        Spinn(5, 4, **options)
