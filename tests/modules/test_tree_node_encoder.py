"""The "spinn" TreeNodeEncoder: every node of a tree as a sequence, with a node mask; words and a
learned constituent input (forward), or one input per node (encode_node_inputs)."""

import random

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from spinn_allennlp.modules import SpinnTreeNodeEncoder, TreeNodeEncoder
from spinn_allennlp.testing import random_tree_batch, recursive_tree_lstm_nodes
from spinn_core.batch import concat_padded
from spinn_core.transitions import PAD, REDUCE, SHIFT


def encoder(**options):
    torch.manual_seed(0)
    return TreeNodeEncoder.from_params(Params({"input_dim": 5, "hidden_dim": 4, **options}))


def batch(lengths, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return random_tree_batch(
        lengths, 5, random.Random(seed), dtype=torch.float64, generator=generator
    )


@pytest.mark.parametrize("levelwise", [True, False])
def test_words_and_learned_constituent_input_equal_the_reference(levelwise):
    nodes_encoder = encoder(levelwise=levelwise).double()
    assert isinstance(nodes_encoder, SpinnTreeNodeEncoder)
    trees = batch([3, 1, 8, 5])
    nodes = nodes_encoder(trees.inputs, trees.mask, trees.transitions)
    assert nodes.states.shape == (4, 15, 4)
    assert nodes.mask.sum(dim=1).tolist() == [5, 1, 15, 9]  # 2n - 1 nodes each
    assert torch.equal(nodes.mask, trees.transitions != PAD)
    assert float(nodes.states.detach()[~nodes.mask].abs().max()) == 0.0
    constituent = nodes_encoder.constituent_input
    for b, (length, tree) in enumerate(zip(trees.lengths.tolist(), trees.trees)):
        # Every node's row holds the learned vector; the reference reads it at constituents.
        node_inputs = constituent.expand(2 * length - 1, -1)
        reference = recursive_tree_lstm_nodes(
            nodes_encoder.spinn, trees.inputs[b, :length], tree, node_inputs
        )
        torch.testing.assert_close(
            nodes.states[b, : 2 * length - 1], reference[:, :4], atol=1e-10, rtol=0
        )
        torch.testing.assert_close(nodes.roots[b], reference[-1, :4], atol=1e-10, rtol=0)


@pytest.mark.parametrize("leaf", ["cell", "projection"])
def test_node_inputs_reach_every_node_leaves_included(leaf):
    """encode_node_inputs: leaves take their own rows (gathered into word order), constituents
    theirs; the same as the core given the leaves' rows as words."""
    nodes_encoder = encoder(leaf=leaf, learned_constituent_input=False).double()
    trees = batch([6, 2, 9], seed=1)
    node_inputs = torch.randn(3, trees.transitions.size(1), 5, dtype=torch.float64)
    node_inputs = node_inputs.requires_grad_()
    nodes = nodes_encoder.encode_node_inputs(node_inputs, trees.transitions)
    for b, (length, tree) in enumerate(zip(trees.lengths.tolist(), trees.trees)):
        steps = trees.transitions[b, : 2 * length - 1]
        words = node_inputs[b, : 2 * length - 1][steps == SHIFT]
        reference = recursive_tree_lstm_nodes(
            nodes_encoder.spinn, words, tree, node_inputs[b, : 2 * length - 1]
        )
        torch.testing.assert_close(
            nodes.states[b, : 2 * length - 1], reference[:, :4], atol=1e-10, rtol=0
        )
    # Every real node's input matters; padding steps' rows don't.
    nodes.states.sum().backward()
    grad_norms = node_inputs.grad.abs().sum(dim=-1)
    real = trees.transitions != PAD
    assert bool((grad_norms[real] > 0).all())
    assert float(grad_norms[~real].max()) == 0.0


def test_node_encoders_batch_equals_single():
    nodes_encoder = encoder().double().eval()
    trees = batch([4, 11, 1], seed=2)
    together = nodes_encoder(trees.inputs, trees.mask, trees.transitions)
    node_inputs = torch.randn(3, trees.transitions.size(1), 5, dtype=torch.float64)
    composed = nodes_encoder.encode_node_inputs(node_inputs, trees.transitions)
    for b, length in enumerate(trees.lengths.tolist()):
        steps = 2 * length - 1
        alone = nodes_encoder(
            trees.inputs[b : b + 1, :length],
            trees.mask[b : b + 1, :length],
            trees.transitions[b : b + 1, :steps],
        )
        torch.testing.assert_close(together.states[b, :steps], alone.states[0], atol=1e-10, rtol=0)
        alone = nodes_encoder.encode_node_inputs(
            node_inputs[b : b + 1, :steps], trees.transitions[b : b + 1, :steps]
        )
        torch.testing.assert_close(composed.states[b, :steps], alone.states[0], atol=1e-10, rtol=0)


def test_without_transitions_the_tree_is_balanced():
    nodes_encoder = encoder().double()
    trees = batch([4], seed=3)
    nodes = nodes_encoder(trees.inputs, trees.mask)
    balanced = [SHIFT, SHIFT, REDUCE, SHIFT, SHIFT, REDUCE, REDUCE]
    assert nodes.transitions[0].tolist() == balanced


def test_sizes_and_bad_options():
    nodes_encoder = encoder()
    assert (nodes_encoder.get_input_dim(), nodes_encoder.get_output_dim()) == (5, 4)
    with pytest.raises(ConfigurationError, match="'projection' or 'cell'"):
        encoder(leaf="word")
    # Without a learned constituent input, forward gives constituents zeros: no parameter.
    assert encoder(learned_constituent_input=False).constituent_input is None


def test_two_groups_in_one_call_split_back_into_separate_calls():
    """Premises and hypotheses stacked into one call (as the tree model does) give each group
    what a call of its own gives, cut to its own longest tree."""
    nodes_encoder = encoder().double().eval()
    premises, hypotheses = batch([7, 3], seed=4), batch([2, 4, 1], seed=5)
    together = nodes_encoder(
        concat_padded([premises.inputs, hypotheses.inputs], 0.0),
        concat_padded([premises.mask, hypotheses.mask], False),
        concat_padded([premises.transitions, hypotheses.transitions], PAD),
    ).split([2, 3])
    for group, trees in zip(together, (premises, hypotheses)):
        alone = nodes_encoder(trees.inputs, trees.mask, trees.transitions)
        assert group.states.shape == alone.states.shape
        assert torch.equal(group.mask, alone.mask)
        assert torch.equal(group.transitions, alone.transitions)
        torch.testing.assert_close(group.states, alone.states, atol=1e-10, rtol=0)
        torch.testing.assert_close(group.roots, alone.roots, atol=1e-10, rtol=0)
