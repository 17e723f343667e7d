"""Beam training (``policies.BeamMixture``, ``runners/beam.py``'s ``run_beam_mixture``): the
sentence vector is the softmax over the beam's summed path log-probabilities times the roots.

What pins the estimator: with a beam at least as wide as the number of trees, nothing is ever
pruned and the softmax over complete paths is the parser's distribution over trees, so the
output is the exact expectation of the root over every tree (enumerated here, float64); the
parser's gradient is that expectation's (finite differences) and is not zero where the roots
differ; and a beam that scores a path by its last step alone (the pitfall of the one public
beam shift-reduce cell) fails the same identity and gives the parser exactly no gradient."""

import math
import random
from typing import List

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.output import Mode
from spinn_core.policies import (
    BeamMixture,
    Choice,
    Given,
    Greedy,
    Step,
    beam_candidates,
    follow_candidates,
)
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
from spinn_core.testing.trees import all_trees, tree_log_prob
from spinn_core.transitions import PAD

# The parser reading the composition's nodes (the tracker feeding the composition, or parsing
# only), with the parts a beam carries from row to row.
MODELS = {
    "tracker": {},
    "parser_only_tracker": {"composition_reads_tracker": False},
    "detached_parser": {"composition_reads_tracker": False, "parser_trains_nodes": False},
    "summaries": {"summary_dim": 3},
    "typed_reduce": {"num_reduce_types": 3},
}


def parser_model(seed: int, **options) -> Spinn:
    torch.manual_seed(seed)
    model = Spinn(5, 4, tracking_dim=3, predict_transitions=True, **options).double()
    # Larger than initial weights: the parser's distribution is then far from uniform and
    # depends on the stack, so the expectation weighs the trees very differently.
    with torch.no_grad():
        for parameter in model.tracker.parameters():
            parameter.normal_(0.0, 1.0)
    return model.eval()


def catalan(n: int) -> int:
    return math.comb(2 * n, n) // (n + 1)


def expected_root(model: Spinn, inputs, mask) -> torch.Tensor:
    """Sum over every tree of p(tree) * root(tree), for one sentence (row 0)."""
    num_words = int(mask.sum())
    total = torch.zeros(model.hidden_dim, dtype=inputs.dtype)
    probability = 0.0
    for tree in all_trees(num_words):
        p = math.exp(tree_log_prob(model, inputs, mask, tree))
        probability += p
        root = model(inputs, mask, torch.tensor([tree]), policy=Given()).sentence[0]
        total = total + p * root.detach()
    assert probability == pytest.approx(1.0, abs=1e-12)  # the parser's distribution over trees
    return total


def steps_of(row: torch.Tensor) -> List[int]:
    return [t for t in row.tolist() if t != PAD]


class LastStepOnly(BeamMixture):
    """The pitfall: each path scored by its current step's log-probability only, not the sum
    over its steps (the one public beam shift-reduce cell keeps these scores)."""

    def choose(self, step: Step) -> Choice:
        assert self.scores is not None
        k = step.forced()[0].size(0)
        # Each live row's score forgotten before adding this step's (dead slots stay dead).
        alive = torch.isfinite(self.scores[:k])
        base = torch.where(alive, 0.0, float("-inf")).to(self.scores.dtype)
        candidates = beam_candidates(step, base, self.width)
        best, index = candidates.topk(self.width, dim=1)
        parents, action = follow_candidates(step, index, self.width)
        self.scores = torch.cat([best.flatten(), self.scores[k:]])
        assert step.logits is not None
        self.history.append((step.logits, parents))
        return Choice(action, parents=parents)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_a_beam_as_wide_as_the_trees_is_the_expectation_over_trees(variant):
    model = parser_model(1, **MODELS[variant])
    rng = random.Random(1)
    for num_words in range(1, 7):
        inputs, mask, _ = make_batch([num_words], 5, rng, "cpu", torch.float64)
        width = catalan(num_words - 1)
        with torch.no_grad():
            mixture = model(inputs, mask, policy=BeamMixture(width))
        assert mixture.mode == Mode.BEAM
        torch.testing.assert_close(
            mixture.sentence[0], expected_root(model, inputs, mask), atol=1e-12, rtol=0
        )
        # The reported trees are the beam's, best first: every tree once, each scored by its
        # log-probability.
        trees = [steps_of(row) for row in mixture.beam_transitions[0]]
        assert sorted(map(tuple, trees)) == sorted(map(tuple, all_trees(num_words)))
        for tree, score in zip(trees, mixture.beam_scores[0].tolist()):
            assert score == pytest.approx(tree_log_prob(model, inputs, mask, tree), abs=1e-12)
        assert steps_of(mixture.transitions[0]) == trees[0]
        assert mixture.beam_scores[0].tolist() == sorted(mixture.beam_scores[0].tolist())[::-1]


def test_the_expectation_holds_for_each_sentence_of_a_batch():
    """A batch of lengths 0-5 with one beam as wide as the longest sentence's trees: the
    shorter ones fill only as many slots as they have trees (the rest weigh exactly 0)."""
    model = parser_model(2)
    lengths = [5, 1, 3, 0, 4, 2]
    inputs, mask, _ = make_batch(lengths, 5, random.Random(2), "cpu", torch.float64)
    with torch.no_grad():
        mixture = model(inputs, mask, policy=BeamMixture(catalan(4)))
    for b, n in enumerate(lengths):
        row = slice(b, b + 1)
        if n == 0:
            assert bool((mixture.sentence[b] == 0).all())
            continue
        expected = expected_root(model, inputs[row], mask[row])
        torch.testing.assert_close(mixture.sentence[b], expected, atol=1e-12, rtol=0)
        alive = torch.isfinite(mixture.beam_scores[b])
        assert int(alive.sum()) == catalan(n - 1)


def test_the_last_step_only_score_fails_the_identity_and_gets_no_gradient():
    """With the score of the last step alone, every complete tree scores 0 (its last move is a
    forced REDUCE), so the mixture is the plain mean of the roots and the parser's classifier,
    which only the scores reach (the tracker parses only), gets a gradient of exactly 0."""
    model = parser_model(3, composition_reads_tracker=False)
    inputs, mask, _ = make_batch([5], 5, random.Random(3), "cpu", torch.float64)
    width = catalan(4)
    pitfall = model(inputs, mask, policy=LastStepOnly(width))
    assert bool((pitfall.beam_scores == 0).all())
    expected = expected_root(model, inputs, mask)
    assert float((pitfall.sentence[0].detach() - expected).abs().max()) > 1e-3
    classifier = model.tracker.transition_classifier
    (gradient,) = torch.autograd.grad(pitfall.sentence.sum(), classifier.weight)
    assert bool((gradient == 0).all())
    # The same parser under the summed score: the identity holds and the gradient is not 0.
    summed = model(inputs, mask, policy=BeamMixture(width))
    torch.testing.assert_close(summed.sentence[0].detach(), expected, atol=1e-12, rtol=0)
    (gradient,) = torch.autograd.grad(summed.sentence.sum(), classifier.weight)
    assert float(gradient.abs().max()) > 1e-3


@pytest.mark.parametrize("width", [2, 14, 20])
@pytest.mark.parametrize("variant", ["tracker", "parser_only_tracker"])
def test_the_parser_s_gradient_is_the_finite_differences(width, variant):
    """gradcheck (float64) through the beam, of a fixed projection of the sentence vectors of
    a batch, with respect to the transition classifier's weights and the tracker's input
    weights. Width 14 = Catalan(4) holds every tree of the 5-word sentence (the function is
    smooth); width 2 prunes, and the gradient is that of the beam it keeps, piecewise smooth
    where no two candidates tie."""
    model = parser_model(4, **MODELS[variant])
    inputs, mask, _ = make_batch([5, 3, 4], 5, random.Random(4), "cpu", torch.float64)
    probe = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    names = ["tracker.transition_classifier.weight", "tracker.transition_classifier.bias"]
    parameters = dict(model.named_parameters())

    def output(weight, bias):
        replaced = {names[0]: weight, names[1]: bias}
        encoded = torch.func.functional_call(
            model, replaced, (inputs, mask), {"policy": BeamMixture(width)}
        )
        return (encoded.sentence * probe).sum()

    originals = [parameters[name].detach().clone().requires_grad_() for name in names]
    assert torch.autograd.gradcheck(output, originals, eps=1e-6, atol=1e-8)
    grads = torch.autograd.grad(output(*originals), originals)
    # Not zero: the roots of the trees differ, and the scores reach them.
    assert float(grads[0].abs().max()) > 1e-4


def test_width_one_is_the_greedy_parse():
    model = parser_model(5)
    inputs, mask, _ = make_batch([6, 1, 0, 9, 4, 2], 5, random.Random(5), "cpu", torch.float64)
    greedy = model(inputs, mask, policy=Greedy())
    beam = model(inputs, mask, policy=BeamMixture(1))
    assert torch.equal(beam.transitions, greedy.transitions)
    torch.testing.assert_close(beam.sentence, greedy.sentence, atol=1e-12, rtol=0)
    # The logits along the best path are those the greedy pass read.
    torch.testing.assert_close(beam.transition_logits, greedy.transition_logits, atol=1e-12, rtol=0)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_a_batch_mixes_as_each_sentence_alone(variant):
    model = parser_model(6, **MODELS[variant])
    lengths = [5, 11, 1, 0, 8, 5, 2]
    inputs, mask, _ = make_batch(lengths, 5, random.Random(6), "cpu", torch.float64)
    batch = model(inputs, mask, policy=BeamMixture(3))
    for b in range(len(lengths)):
        row = slice(b, b + 1)
        alone = model(inputs[row], mask[row], policy=BeamMixture(3))
        assert steps_of(batch.transitions[b]) == steps_of(alone.transitions[0])
        torch.testing.assert_close(batch.sentence[row], alone.sentence, atol=1e-12, rtol=0)
        torch.testing.assert_close(batch.beam_scores[row], alone.beam_scores, atol=1e-12, rtol=0)
        if alone.transition_logits is None:  # the empty sentence: no step
            continue
        steps = alone.transition_logits.size(1)
        torch.testing.assert_close(
            batch.transition_logits[row, :steps], alone.transition_logits, atol=1e-12, rtol=0
        )


def test_the_best_path_s_logits_are_those_of_its_tree():
    """``transition_logits`` of a beam mixture are read along the best parse: a pass that
    follows that tree as given transitions reads the same logits."""
    model = parser_model(7)
    inputs, mask, _ = make_batch([7, 3, 12, 1], 5, random.Random(7), "cpu", torch.float64)
    beam = model(inputs, mask, policy=BeamMixture(4))
    given = model(inputs, mask, beam.transitions, policy=Given())
    torch.testing.assert_close(beam.transition_logits, given.transition_logits, atol=1e-12, rtol=0)


def test_soft_top_k_equals_the_hard_cut_when_nothing_is_dropped_and_differs_when_it_is():
    model = parser_model(8)
    inputs, mask, _ = make_batch([5], 5, random.Random(8), "cpu", torch.float64)
    # One more slot than there are trees: no live candidate is ever dropped.
    wide = catalan(4) + 1
    hard = model(inputs, mask, policy=BeamMixture(wide))
    soft = model(inputs, mask, policy=BeamMixture(wide, soft_top_k=True))
    torch.testing.assert_close(soft.sentence, hard.sentence, atol=1e-12, rtol=0)
    narrow_hard = model(inputs, mask, policy=BeamMixture(3))
    narrow_soft = model(inputs, mask, policy=BeamMixture(3, soft_top_k=True))
    assert float((narrow_soft.sentence - narrow_hard.sentence).detach().abs().max()) > 1e-6
    # The soft slot scores the softmax-weighted mean of what the hard cut drops: no more than
    # the best of it, which is what the hard beam's last slot keeps.
    assert float(narrow_soft.beam_scores[0, -1]) <= float(narrow_hard.beam_scores[0, -1]) + 1e-12
    classifier = model.tracker.transition_classifier
    (gradient,) = torch.autograd.grad(narrow_soft.sentence.sum(), classifier.weight)
    assert bool(torch.isfinite(gradient).all()) and float(gradient.abs().max()) > 0


def test_trees_are_valid_and_gradients_finite_at_lengths_1_to_60():
    model = parser_model(9, summary_dim=3).train()
    lengths = list(range(1, 61))
    inputs, mask, _ = make_batch(lengths, 5, random.Random(9), "cpu", torch.float64)
    for soft in (False, True):
        beam = model(inputs, mask, policy=BeamMixture(3, soft_top_k=soft))
        for b, n in enumerate(lengths):
            assert tr.is_valid(steps_of(beam.transitions[b]), n)
            for row in beam.beam_transitions[b]:
                assert tr.is_valid(steps_of(row), n)
        beam.sentence.sum().backward()
        for name, parameter in model.named_parameters():
            assert parameter.grad is not None, name
            assert bool(torch.isfinite(parameter.grad).all()), name
        model.zero_grad()


def test_node_states_are_refused_with_a_message():
    model = parser_model(10)
    inputs, mask, _ = make_batch([3], 5, random.Random(10), "cpu", torch.float64)
    with pytest.raises(ValueError, match="node states are not returned"):
        model(inputs, mask, policy=BeamMixture(2), return_nodes=True)


def test_a_width_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        BeamMixture(0)
    with pytest.raises(ValueError, match="soft_top_k needs a width of at least 2"):
        BeamMixture(1, soft_top_k=True)


def test_mixing_predictions_reports_every_root_and_the_same_roots_mixture():
    model = parser_model(11)
    inputs, mask, _ = make_batch([5, 2, 4], 5, random.Random(11), "cpu", torch.float64)
    roots = model(inputs, mask, policy=BeamMixture(3))
    predictions = model(inputs, mask, policy=BeamMixture(3, mix="predictions"))
    assert roots.beam_roots is None and predictions.beam_roots.shape == (3, 3, 4)
    torch.testing.assert_close(predictions.sentence, roots.sentence, atol=1e-12, rtol=0)
    weights = torch.softmax(predictions.beam_scores, dim=1)
    mixture = (weights.unsqueeze(2) * predictions.beam_roots).sum(dim=1)
    torch.testing.assert_close(mixture, predictions.sentence, atol=1e-12, rtol=0)
    with pytest.raises(ValueError, match="mix must be one of"):
        BeamMixture(3, mix="losses")


def test_gumbel_selection_keeps_every_tree_of_a_wide_beam_and_explores_a_narrow_one():
    """With a beam as wide as the trees, the noise can drop none: the mixture is still the
    expectation over trees. With a narrow one, the noise changes which trees survive (other
    seeds, other beams) while each survivor keeps its true log-probability, best first."""
    model = parser_model(10)
    inputs, mask, _ = make_batch([5], 5, random.Random(10), "cpu", torch.float64)
    with torch.no_grad():
        wide = model(inputs, mask, policy=BeamMixture(catalan(4), gumbel_scale=1.0))
    torch.testing.assert_close(
        wide.sentence[0], expected_root(model, inputs, mask), atol=1e-12, rtol=0
    )
    beams = set()
    for seed in range(8):
        torch.manual_seed(seed)
        with torch.no_grad():
            narrow = model(inputs, mask, policy=BeamMixture(2, gumbel_scale=1.0))
        trees = [tuple(steps_of(row)) for row in narrow.beam_transitions[0]]
        beams.add(tuple(sorted(trees)))
        for tree, score in zip(trees, narrow.beam_scores[0].tolist()):
            assert tr.is_valid(list(tree), 5)
            assert score == pytest.approx(tree_log_prob(model, inputs, mask, list(tree)), abs=1e-12)
        assert narrow.beam_scores[0].tolist() == sorted(narrow.beam_scores[0].tolist())[::-1]
    assert len(beams) > 1, "the noise never changed the beam"
    with pytest.raises(ValueError, match="gumbel_scale"):
        BeamMixture(2, gumbel_scale=-1.0)
