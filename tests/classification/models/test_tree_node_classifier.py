"""The SST model with each shipped config, on real SST lines (fixtures)."""

import pytest
import torch
from allennlp.common.testing import ModelTestCase

from spinn_allennlp.classification.models.tree_node_classifier import labels_of_followed_nodes
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from spinn_core.transitions import PAD, REDUCE, SHIFT
from tools.testing.configs import SST_SAMPLE, as_json, sst_config, sst_small_overrides

CASES = [
    ("fine", "spinn_pi_nt"),
    ("fine", "spinn_pi"),
    ("fine", "spinn"),
    ("fine", "child_sum"),
    ("fine", "lstm"),
]


class TestTreeNodeClassifierConfigs(SpinnModelTestCase):
    @pytest.mark.parametrize("setting, encoder", CASES)
    def test_train_save_load_and_batch_consistency(self, setting, encoder):
        config = sst_config(setting, encoder)
        self.set_up_model(config, SST_SAMPLE)
        self.ensure_model_can_train_save_and_load(
            config, overrides=as_json(sst_small_overrides(encoder)), seed=0
        )
        self.ensure_batch_predictions_are_consistent()


def model_and_batch(setting, encoder):
    test = ModelTestCase()
    test.set_up_model(sst_config(setting, encoder), SST_SAMPLE)
    return test.model.eval(), test.dataset.as_tensor_dict()


@pytest.mark.parametrize("encoder", ["spinn_pi_nt", "child_sum", "lstm"])
def test_metrics_and_loss_over_every_labelled_node(encoder):
    model, batch = model_and_batch("fine", encoder)
    output = model(**batch)
    metrics = model.get_metrics(reset=True)
    if encoder == "lstm":
        assert set(metrics) == {"root_accuracy"}
        expected = torch.nn.functional.cross_entropy(output["logits"], batch["label"])
    else:
        assert set(metrics) == {"root_accuracy", "phrase_accuracy"}
        targets = batch["node_labels" if encoder == "spinn_pi_nt" else "projection_labels"]
        logits = output["node_logits"]
        expected = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), ignore_index=-1
        )
        hits = ((logits.argmax(-1) == targets) & (targets >= 0)).sum() / (targets >= 0).sum()
        assert metrics["phrase_accuracy"] == pytest.approx(float(hits))
    torch.testing.assert_close(output["loss"], expected)
    root_hits = (output["logits"].argmax(-1) == batch["label"]).float().mean()
    assert metrics["root_accuracy"] == pytest.approx(float(root_hits))


def test_full_spinn_scores_its_own_parse_against_gold_spans():
    model, batch = model_and_batch("fine", "spinn")
    output = model(**batch)  # evaluation: the model follows its own parse
    metrics = model.get_metrics(reset=True)
    assert {"transition_accuracy", "tree_accuracy", "valid_tree_rate"} <= set(metrics)
    assert output["transitions_source"][0] == "predicted"
    targets = labels_of_followed_nodes(
        batch["node_labels"], batch["transitions"], output["transitions"], own_parse=True
    )
    # Every word is a constituent of both trees; the root spans the sentence in both.
    shifts = output["transitions"] == SHIFT
    assert bool((targets[shifts] >= 0).all())
    assert int((targets >= 0).sum()) <= int((batch["node_labels"] >= 0).sum())


def test_labels_of_followed_nodes_match_spans():
    labels = torch.tensor([[2, 3, 1, 4, 0]])
    gold = torch.tensor([[SHIFT, SHIFT, REDUCE, SHIFT, REDUCE]])  # ( ( a b ) c )
    other = torch.tensor([[SHIFT, SHIFT, SHIFT, REDUCE, REDUCE]])  # ( a ( b c ) )
    assert labels_of_followed_nodes(labels, gold, other, own_parse=True).tolist() == [
        [2, 3, 4, -1, 0]
    ]
    assert labels_of_followed_nodes(labels, gold, gold, own_parse=False) is labels


def test_human_readable_trees_and_nodes():
    model, batch = model_and_batch("binary", "spinn_pi_nt")
    output = model.make_output_human_readable(model(**batch))
    first = output["metadata"][0]["tokens"]
    assert output["label"][0] in ("negative", "positive")
    assert len(output["nodes"][0]) == 2 * len(first) - 1
    assert output["nodes"][0][-1]["phrase"] == " ".join(first)
    labeled = output["labeled_tree"][0]
    assert labeled.startswith("(") and labeled.count("(") == 2 * len(first) - 1
    assert [w.strip(")") for w in labeled.split() if not w.startswith("(")] == first
    steps = [t for t in output["transitions"][0].tolist() if t != PAD]
    assert len(steps) == 2 * len(first) - 1


def test_labels_outside_the_models_classes_are_an_error():
    model, batch = model_and_batch("binary", "spinn_pi_nt")
    batch["node_labels"][0, 0] = 4
    with pytest.raises(ValueError, match="num_labels"):
        model(**batch)
