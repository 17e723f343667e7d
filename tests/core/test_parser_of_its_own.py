"""`composition_reads_tracker=False`: the tracker only parses, and the composition is the
plain TreeLSTM of SPINN-PI-NT over whatever tree the parser picks. So every pass (given trees,
the parser's greedy trees, straight-through Gumbel's drawn trees on the soft stack) must give
exactly what PI-NT gives on the same trees with the same composition and leaves."""

import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.output import GIVEN, PREDICTED
from spinn_core.policies import Given, StraightThroughGumbel
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch, policy_for_mode

LENGTHS = [1, 2, 5, 0, 17, 40, 3, 64]


def parser_and_tree_lstm():
    """A full SPINN whose composition ignores its tracker, and a PI-NT with the same
    composition and leaf projection (float64)."""
    torch.manual_seed(0)
    parser = Spinn(
        5, 4, tracking_dim=3, predict_transitions=True, composition_reads_tracker=False
    ).double()
    with torch.no_grad():  # larger parser weights: trees far from the untrained default
        for parameter in parser.tracker.parameters():
            parameter.mul_(3.0)
    tree_lstm = Spinn(5, 4, levelwise=False).double()
    assert parser.compose.linear.weight.shape == tree_lstm.compose.linear.weight.shape
    tree_lstm.load_state_dict(parser.state_dict(), strict=False)
    return parser, tree_lstm


def test_the_composition_has_no_tracker_columns():
    parser, _ = parser_and_tree_lstm()
    assert parser.compose.extra_dim == 0
    reading = Spinn(5, 4, tracking_dim=3, predict_transitions=True)
    assert reading.compose.extra_dim == 3  # the paper's SPINN: the tracker feeds every node


@pytest.mark.parametrize("mode", [GIVEN, PREDICTED])
def test_given_and_greedy_trees_compose_as_a_tree_lstm(mode):
    parser, tree_lstm = parser_and_tree_lstm()
    inputs, mask, transitions = make_batch(LENGTHS, 5, random.Random(0), "cpu", torch.float64)
    output = parser(
        inputs, mask, transitions if mode == GIVEN else None, policy=policy_for_mode(mode)
    )
    if mode == PREDICTED:  # its own trees: not the given ones, so the check is not trivial
        assert not torch.equal(output.transitions[:, : transitions.size(1)], transitions)
    expected = tree_lstm(inputs, mask, output.transitions, policy=Given())
    # float64: only rounding differs (~1e-15); 1e-10 claims equality.
    torch.testing.assert_close(output.sentence, expected.sentence, atol=1e-10, rtol=0)


def test_straight_through_gumbel_trees_compose_as_a_tree_lstm():
    """On the soft stack (strengths exactly 0 or 1), with gradients reaching the parser."""
    parser, tree_lstm = parser_and_tree_lstm()
    parser.train()
    inputs, mask, _ = make_batch(LENGTHS, 5, random.Random(1), "cpu", torch.float64)
    drawn = parser(inputs, mask, None, policy=StraightThroughGumbel(0.5))
    for row, n in zip(drawn.transitions.tolist(), LENGTHS):
        sequence = [t for t in row if t != tr.PAD]
        assert tr.is_valid(sequence, n) if n else sequence == []
    expected = tree_lstm(inputs, mask, drawn.transitions, policy=Given())
    torch.testing.assert_close(drawn.sentence, expected.sentence, atol=1e-10, rtol=0)
    drawn.sentence.pow(2).sum().backward()
    classifier = parser.tracker.transition_classifier.weight.grad
    assert classifier is not None and bool(classifier.abs().sum() > 0)
