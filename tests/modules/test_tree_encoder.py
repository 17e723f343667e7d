"""`encode` and `encode_together`: any `Seq2VecEncoder` asked for its trees one way; several
sentence batches through one encoder call; which tree each sentence was composed over."""

import random

import pytest
import torch
from allennlp.modules.seq2vec_encoders import LstmSeq2VecEncoder

from spinn_allennlp.data.tree_sources import GoldTrees
from spinn_allennlp.modules import ChildSumTreeLSTMEncoder, SpinnEncoder
from spinn_allennlp.modules.encoder_settings import ProjectionSettings, TrackerSettings
from spinn_allennlp.modules.sentence_batches import encode_together, stack_batches
from spinn_allennlp.modules.tree_encoder import (
    DEFAULT_TREE,
    GOLD,
    encode,
    has_nodes,
    has_parser,
    num_reduce_types,
    transitions_source,
)
from spinn_allennlp.testing import make_batch
from spinn_core.output import Mode
from spinn_core.transitions import PAD


def two_batches(dim, dtype=torch.float64):
    rng = random.Random(3)
    return [
        make_batch([5, 2, 8], dim, rng, "cpu", dtype),
        make_batch([3, 1, 4], dim, rng, "cpu", dtype),
    ]


@pytest.mark.parametrize("with_transitions", [True, False])
def test_tree_encoder_together_equals_separately(with_transitions):
    torch.manual_seed(0)
    encoder = (
        SpinnEncoder(6, 5, tracker=TrackerSettings(3, predict_transitions=True)).double().eval()
    )
    batches = [
        (inputs, mask, transitions if with_transitions else None)
        for inputs, mask, transitions in two_batches(6)
    ]
    together = encode_together(encoder, batches)
    for (inputs, mask, transitions), (vectors, output) in zip(batches, together):
        alone = encoder.encode(inputs, mask, transitions)
        torch.testing.assert_close(vectors, alone.sentence, atol=1e-10, rtol=0)
        assert output is not None and torch.equal(output.transitions, alone.transitions)
        torch.testing.assert_close(
            output.transition_logits, alone.transition_logits, atol=1e-10, rtol=0
        )


def test_plain_seq2vec_encoder_together_equals_separately():
    torch.manual_seed(0)
    encoder = LstmSeq2VecEncoder(6, 5).double().eval()
    batches = two_batches(6)
    for (inputs, mask, _), (vectors, output) in zip(batches, encode_together(encoder, batches)):
        assert output is None
        torch.testing.assert_close(vectors, encoder(inputs, mask), atol=1e-10, rtol=0)


def test_batches_with_and_without_transitions_are_encoded_separately():
    """A parser would follow its own trees for one batch and the given ones for the other:
    one call cannot do both, so each batch gets its own."""
    torch.manual_seed(0)
    encoder = (
        SpinnEncoder(6, 5, tracker=TrackerSettings(3, predict_transitions=True)).double().train()
    )
    (x1, m1, t1), (x2, m2, _) = two_batches(6)
    (_, given), (_, predicted) = encode_together(encoder, [(x1, m1, t1), (x2, m2, None)])
    assert given is not None and given.mode == "given" and torch.equal(given.transitions, t1)
    assert predicted is not None and predicted.mode == "predicted"


def test_training_batch_norm_sees_every_batch_at_once():
    """What the docstring says changes in training: the projection's batch norm takes its
    statistics over the words of all batches together, and updates its running mean once."""
    torch.manual_seed(0)
    encoder = (
        SpinnEncoder(
            6, 5, tracker=TrackerSettings(3), projection=ProjectionSettings(batch_norm=True)
        )
        .double()
        .train()
    )
    batches = two_batches(6)
    words = torch.cat([inputs[mask] for inputs, mask, _ in batches])
    expected = 0.1 * encoder.spinn.projection.linear(words).mean(dim=0)  # momentum 0.1, from 0
    encode_together(encoder, batches)
    running_mean = encoder.spinn.projection.batch_norm.running_mean
    torch.testing.assert_close(running_mean, expected.detach(), atol=1e-12, rtol=0)


def test_encode_asks_each_kind_of_encoder_for_its_own_tree():
    torch.manual_seed(0)
    inputs, mask, transitions = two_batches(6)[0]
    heads = torch.tensor([[1, 2, 4, 4, -1, -1, -1, -1], [-1, 0] + [-1] * 6, [-1] * 8])
    heads[2, :8] = torch.tensor([1, 2, 3, 4, 5, 6, 7, -1])
    spinn = SpinnEncoder(6, 5, tracker=TrackerSettings(3, predict_transitions=True)).double().eval()
    child_sum = ChildSumTreeLSTMEncoder(6, 5).double()
    lstm = LstmSeq2VecEncoder(6, 5).double()

    tree = encode(spinn, inputs, mask, transitions, heads=heads, return_nodes=True)
    alone = spinn.encode(inputs, mask, transitions, return_nodes=True)
    assert tree.dependency is None and tree.tree is not None
    assert torch.equal(tree.sentence, alone.sentence) and tree.node_hidden is not None
    assert torch.equal(tree.node_hidden, alone.node_hidden)
    assert torch.equal(tree.tree.transitions, alone.transitions)

    dependency = encode(child_sum, inputs, mask, transitions, heads=heads, return_nodes=True)
    expected = child_sum.encode(inputs, mask, heads, return_nodes=True)
    assert dependency.tree is None and dependency.dependency is not None
    assert torch.equal(dependency.sentence, expected.sentence)
    assert torch.equal(dependency.dependency.heads, expected.heads)
    assert dependency.node_hidden is not None
    assert torch.equal(dependency.node_hidden, expected.node_hidden)

    plain = encode(lstm, inputs, mask, transitions, heads=heads, return_nodes=True)
    assert plain.tree is None and plain.dependency is None and plain.node_hidden is None
    assert torch.equal(plain.sentence, lstm(inputs, mask))


def test_what_an_encoder_can_do_is_asked_of_the_tree_encoder_interface():
    full = SpinnEncoder(6, 5, tracker=TrackerSettings(3, predict_transitions=True, reduce_types=4))
    pi_nt = SpinnEncoder(6, 5)
    child_sum = ChildSumTreeLSTMEncoder(6, 5)
    lstm = LstmSeq2VecEncoder(6, 5)
    assert [has_parser(e) for e in (full, pi_nt, child_sum, lstm)] == [True, False, False, False]
    assert [num_reduce_types(e) for e in (full, pi_nt, child_sum, lstm)] == [4, 0, 0, 0]
    assert [has_nodes(e) for e in (full, pi_nt, child_sum, lstm)] == [True, True, True, False]


def test_transitions_source_has_one_vocabulary():
    metadata = [{"transitions_source": "benepar"}, {"tree_source": "right_branching"}, {}]
    # The encoder's own choice wins; without given transitions, the default tree.
    for mode in ("predicted", "mixed", "soft"):
        assert transitions_source(mode, True, metadata, 3) == [mode] * 3
    assert transitions_source("given", False, metadata, 3) == [DEFAULT_TREE] * 3
    # Given transitions: the source the reader names (SNLI's key or SST's), else gold.
    assert transitions_source("given", True, metadata, 3) == ["benepar", "right_branching", GOLD]
    assert transitions_source("given", True, None, 2) == [GOLD, GOLD]
    # A line without a tree ("none") next to lines with one: the encoder's own choice.
    no_tree = [{"transitions_source": "none"}]
    assert transitions_source("given", True, no_tree, 1) == [DEFAULT_TREE]
    assert transitions_source("given", True, no_tree, 1, has_parser=True) == ["predicted"]
    assert GOLD == GoldTrees.name  # the corpus's own trees, as a tree source calls them


def test_stack_batches_pads_stacks_and_cuts_back():
    (x1, m1, t1), (x2, m2, t2) = two_batches(6)
    stacked = stack_batches([(x1, m1, t1), (x2, m2, t2)])
    assert stacked.sizes == [3, 3] and stacked.widths == [8, 4]
    assert stacked.inputs.shape == (6, 8, 6) and stacked.transitions is not None
    assert torch.equal(stacked.mask[3:, 4:], torch.zeros(3, 4, dtype=torch.bool))
    assert (stacked.transitions[3:, t2.size(1) :] == PAD).all()
    first, second = stacked.split_positions(stacked.inputs)
    assert torch.equal(first, x1) and torch.equal(second, x2)
    assert [part.shape for part in stacked.split(stacked.inputs)] == [(3, 8, 6), (3, 8, 6)]
    assert stack_batches([(x1, m1, None), (x2, m2, None)]).transitions is None
    with pytest.raises(ValueError, match="give transitions for every sentence batch"):
        stack_batches([(x1, m1, t1), (x2, m2, None)])


def test_transitions_sources_are_plain_strings_whatever_the_mode():
    """A full SPINN's source was a `Mode` (a str subclass) and every other one a str: JSON
    and `==` never told them apart, a Python user's `type()` did."""

    for mode in (Mode.PREDICTED, Mode.SAMPLED, Mode.BEAM, "given"):
        for source in transitions_source(mode, True, None, 2, has_parser=True):
            assert type(source) is str
    assert transitions_source(Mode.PREDICTED, False, None, 1) == ["predicted"]
