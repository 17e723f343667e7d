"""Beam search over the parser's transitions (``policies.BeamSearch``, ``runners/beam.py``):
width 1 is the greedy parse; a width of at least the number of trees finds the most probable
tree, checked against every tree enumerated; the log-probability it reports is the tree's; a
batch gives what each sentence alone gives; trees are valid at every length."""

import math
import random
from typing import List

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.output import Mode
from spinn_core.policies import BeamSearch, Given, Greedy
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
from spinn_core.testing.trees import all_trees, tree_log_prob
from spinn_core.transitions import PAD

# The parts a beam has to carry from row to row: the tracker's state (every parser), the
# stack summaries' pointers, the REDUCE types of the history.
MODELS = {
    "tracker": {},
    "summaries": {"summary_dim": 3},
    "typed_reduce": {"num_reduce_types": 3},
    "parser_of_its_own": {"composition_reads_tracker": False},
}


def parser_model(seed: int, **options) -> Spinn:
    torch.manual_seed(seed)
    model = Spinn(5, 4, tracking_dim=3, predict_transitions=True, **options).double()
    # Weights larger than at initialisation: the parser's choices then depend on the stack
    # enough that the greedy tree is not always the most probable one.
    with torch.no_grad():
        for parameter in model.tracker.parameters():
            parameter.normal_(0.0, 1.0)
    return model.eval()


def steps_of(row: torch.Tensor) -> List[int]:
    return [t for t in row.tolist() if t != PAD]


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_width_one_is_the_greedy_parse(variant):
    model = parser_model(0, **MODELS[variant])
    inputs, mask, _ = make_batch([6, 1, 0, 9, 4, 2], 5, random.Random(0), "cpu", torch.float64)
    greedy = model(inputs, mask, policy=Greedy())
    beam = model(inputs, mask, policy=BeamSearch(1))
    assert beam.mode == Mode.PREDICTED
    assert torch.equal(beam.transitions, greedy.transitions)
    torch.testing.assert_close(beam.sentence, greedy.sentence, atol=1e-12, rtol=0)
    torch.testing.assert_close(beam.transition_logits, greedy.transition_logits, atol=1e-12, rtol=0)
    if variant == "typed_reduce":
        assert torch.equal(beam.reduce_types, greedy.reduce_types)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_a_beam_as_wide_as_the_trees_finds_the_most_probable_tree(variant):
    """Every partial parse extends to a tree, so a beam of Catalan(n - 1) keeps every partial
    parse and the search is exhaustive: its tree must be the argmax over all trees."""
    model = parser_model(1, **MODELS[variant])
    rng = random.Random(1)
    differs = 0
    for num_words in range(1, 7):
        for _ in range(3):
            inputs, mask, _ = make_batch([num_words], 5, rng, "cpu", torch.float64)
            trees = list(all_trees(num_words))
            assert len(trees) == math.comb(2 * num_words - 2, num_words - 1) // num_words
            scores = [tree_log_prob(model, inputs, mask, tree) for tree in trees]
            best = max(range(len(trees)), key=scores.__getitem__)
            beam = model(inputs, mask, policy=BeamSearch(len(trees)))
            assert steps_of(beam.transitions[0]) == trees[best]
            assert float(beam.beam_log_probs[0]) == pytest.approx(scores[best], abs=1e-12)
            greedy = model(inputs, mask, policy=Greedy())
            differs += steps_of(greedy.transitions[0]) != trees[best]
    # The test has teeth: on some sentences the greedy tree is not the most probable one.
    assert differs > 0


def test_the_reported_log_probability_is_the_tree_s():
    model = parser_model(2)
    inputs, mask, _ = make_batch([7, 3, 12, 1], 5, random.Random(2), "cpu", torch.float64)
    beam = model(inputs, mask, policy=BeamSearch(4))
    for b in range(4):
        row = slice(b, b + 1)
        expected = tree_log_prob(model, inputs[row], mask[row], steps_of(beam.transitions[b]))
        assert float(beam.beam_log_probs[b]) == pytest.approx(expected, abs=1e-12)
    # The sentence vectors are those of the trees found, followed as given trees.
    given = model(inputs, mask, beam.transitions, policy=Given())
    torch.testing.assert_close(beam.sentence, given.sentence, atol=1e-12, rtol=0)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_a_batch_searches_as_each_sentence_alone(variant):
    model = parser_model(3, **MODELS[variant])
    lengths = [5, 11, 1, 0, 8, 5, 2]
    inputs, mask, _ = make_batch(lengths, 5, random.Random(3), "cpu", torch.float64)
    batch = model(inputs, mask, policy=BeamSearch(3))
    for b in range(len(lengths)):
        row = slice(b, b + 1)
        alone = model(inputs[row], mask[row], policy=BeamSearch(3))
        assert steps_of(batch.transitions[b]) == steps_of(alone.transitions[0])
        torch.testing.assert_close(batch.sentence[row], alone.sentence, atol=1e-12, rtol=0)
        torch.testing.assert_close(
            batch.beam_log_probs[row], alone.beam_log_probs, atol=1e-12, rtol=0
        )


def test_trees_are_valid_at_lengths_1_to_100():
    model = parser_model(4, summary_dim=3)
    lengths = list(range(1, 101))
    inputs, mask, _ = make_batch(lengths, 5, random.Random(4), "cpu", torch.float64)
    beam = model(inputs, mask, policy=BeamSearch(3))
    for b, n in enumerate(lengths):
        assert tr.is_valid(steps_of(beam.transitions[b]), n)
    assert bool(torch.isfinite(beam.beam_log_probs).all())
    assert bool((beam.beam_log_probs <= 0).all())


def test_the_encoding_pass_carries_gradients_and_the_search_none():
    model = parser_model(5)
    inputs, mask, _ = make_batch([4, 6], 5, random.Random(5), "cpu", torch.float64)
    inputs.requires_grad_(True)
    beam = model(inputs, mask, policy=BeamSearch(2))
    assert beam.beam_log_probs.grad_fn is None
    beam.sentence.sum().backward()
    assert inputs.grad is not None and bool(inputs.grad[mask].abs().sum() > 0)


def test_a_beam_needs_a_parser_and_a_positive_width():
    with pytest.raises(ValueError, match="at least 1"):
        BeamSearch(0)
    model = Spinn(5, 4, tracking_dim=3).double()
    inputs, mask, _ = make_batch([3], 5, random.Random(6), "cpu", torch.float64)
    with pytest.raises(ValueError, match="predict_transitions"):
        model(inputs, mask, policy=BeamSearch(2))
