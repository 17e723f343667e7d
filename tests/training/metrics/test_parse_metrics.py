import pytest
import torch
from allennlp.common import Params
from allennlp.training.metrics import Metric

from spinn_allennlp.training.metrics import ParseMetrics, Share

S, R, P = 0, 1, -1


def test_share_sums_over_batches_and_resets():
    share = Metric.from_params(Params({"type": "share"}))
    assert isinstance(share, Share)
    assert share.get_metric() == 0.0  # no trials yet
    share(3, 4)
    share(1, 4)
    assert share.get_metric(reset=True) == 0.5
    assert share.get_metric() == 0.0


def test_parse_metrics_count_steps_trees_and_validity():
    metrics = ParseMetrics()
    gold = torch.tensor([[S, S, R, P, P], [S, S, R, S, R], [S, P, P, P, P]])
    predicted = torch.tensor(
        [
            [S, S, R, S, S],  # right on every gold step
            [S, S, S, R, R],  # 3 of 5 right, another valid tree
            [R, S, S, S, S],
        ]
    )  # wrong, and REDUCE first: not a tree
    metrics(predicted, gold)
    values = metrics.get_metric(reset=True)
    assert values["transition_accuracy"] == pytest.approx((3 + 3 + 0) / 9)
    assert values["tree_accuracy"] == pytest.approx(1 / 3)
    assert values["valid_tree_rate"] == pytest.approx(2 / 3)
    # Only the second sentence has a constituent besides the whole (gold: words 0-1); the
    # predicted tree's is words 1-2.
    assert values["bracket_f1"] == pytest.approx(0.0)
    # Reset: nothing is measured, and nothing is reported (not a 0 that reads as a result).
    assert metrics.get_metric() == {}


def test_metrics_that_could_not_be_measured_are_left_out():
    """A parser trained and evaluated without gold transitions never reaches the metric: no
    0.0 for transition and tree accuracy. Bracket F1 is left out where no sentence has a
    constituent to score (fewer than three words), the others are measured."""
    assert ParseMetrics().get_metric(reset=True) == {}
    metrics = ParseMetrics()
    metrics(torch.tensor([[S, S, R]]), torch.tensor([[S, S, R]]))
    values = metrics.get_metric(reset=True)
    assert set(values) == {"transition_accuracy", "tree_accuracy", "valid_tree_rate"}
    assert values["tree_accuracy"] == 1.0


def test_bracket_f1_averages_over_sentences_with_inner_constituents():
    metrics = ParseMetrics()
    # ((a b) (c d)) against ((a b) c) d) and itself: F1 1/2 and 1.
    gold = torch.tensor([[S, S, R, S, S, R, R], [S, S, R, S, S, R, R]])
    predicted = torch.tensor([[S, S, R, S, R, S, R], [S, S, R, S, S, R, R]])
    metrics(predicted, gold)
    assert metrics.get_metric(reset=True)["bracket_f1"] == pytest.approx((0.5 + 1.0) / 2)


def test_sentences_without_a_gold_tree_are_not_scored():
    """A line without a parse next to lines with one: its gold row is all PAD."""
    with_gold = ParseMetrics()
    with_gold(torch.tensor([[0, 0, 1]]), torch.tensor([[0, 0, 1]]))
    mixed = ParseMetrics()
    mixed(torch.tensor([[0, 0, 1], [0, 1, 0]]), torch.tensor([[0, 0, 1], [-1, -1, -1]]))
    assert mixed.get_metric() == with_gold.get_metric()
    assert mixed.get_metric()["tree_accuracy"] == 1.0
