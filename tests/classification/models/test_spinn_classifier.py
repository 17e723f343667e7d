"""The sentence classifier with each ListOps config (NSHRDLU Models 0-4 and the baselines), on
real ListOps lines (fixtures)."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from spinn_allennlp.classification.models import spinn_classifier
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from spinn_core.transitions import PAD, is_valid
from tools.testing.configs import (
    LISTOPS_SAMPLE,
    LISTOPS_VARIANTS,
    as_json,
    listops_config,
    listops_small_overrides,
)


class TestListOpsConfigs(SpinnModelTestCase):
    @pytest.mark.parametrize("variant", LISTOPS_VARIANTS)
    def test_train_save_load_and_batch_consistency(self, variant):
        config = listops_config(variant)
        self.set_up_model(config, LISTOPS_SAMPLE)
        # Every parameter gets a gradient (Model 4's parser too, from the label's loss alone).
        self.ensure_model_can_train_save_and_load(
            config, overrides=as_json(listops_small_overrides(variant)), seed=0
        )
        self.ensure_batch_predictions_are_consistent()


def model_and_batch(variant):
    test = ModelTestCase()
    test.set_up_model(listops_config(variant), LISTOPS_SAMPLE)
    return test.model, test.dataset.as_tensor_dict()


@pytest.mark.parametrize("variant", ["spinn", "spinn_model4"])
def test_parsers_report_trees_and_parse_metrics(variant):
    model, batch = model_and_batch(variant)
    model.eval()
    output = model.make_output_human_readable(model(**batch))
    metrics = model.get_metrics(reset=True)
    # No fixture line is over 100 tokens: that bucket has no figure (not 0.0).
    assert set(metrics) == {
        "accuracy",
        "accuracy_tokens_le_100",
        "transition_accuracy",
        "tree_accuracy",
        "valid_tree_rate",
        "bracket_f1",
    }
    assert metrics["valid_tree_rate"] == 1.0
    assert output["transitions_source"][0] == ("soft" if variant == "spinn_model4" else "predicted")
    for tree, meta, row in zip(output["tree"], output["metadata"], output["transitions"].tolist()):
        assert tree.replace("( ", "").replace(" )", "").split() == meta["tokens"]
        assert is_valid([t for t in row if t != PAD], len(meta["tokens"]))


def test_model4_trains_its_parser_from_the_label_alone():
    model, batch = model_and_batch("spinn_model4")
    model.train()
    assert model._transition_loss_weight == 0.0
    model(**batch)["loss"].backward()
    classifier = model._encoder.spinn.tracker.transition_classifier
    assert classifier.weight.grad is not None and classifier.weight.grad.abs().sum() > 0


def test_reinforce_samples_trees_in_training_and_parses_greedily_in_evaluation():
    model, batch = model_and_batch("spinn_reinforce")
    model.train()
    torch.manual_seed(0)
    output = model(**batch)
    assert output["transitions_source"][0] == "sampled"
    output["loss"].backward()
    classifier = model._encoder.spinn.tracker.transition_classifier
    assert classifier.weight.grad is not None and classifier.weight.grad.abs().sum() > 0
    # Without the REINFORCE term nothing reaches the parser's classifier: no transition loss,
    # and a sampled tree's choices are not differentiable.
    model.zero_grad()
    policy_gradient, model._policy_gradient = model._policy_gradient, None
    model.train()
    sampled = model._encoder.encode(
        model._embedder(batch["tokens"]),
        batch["tokens"]["tokens"]["tokens"] > 0,
        policy=policy_gradient.policy(),
    )
    sampled.sentence.sum().backward()
    assert classifier.weight.grad is None or classifier.weight.grad.abs().sum() == 0
    model.eval()
    assert model(**batch)["transitions_source"][0] == "predicted"


def test_straight_through_gumbel_draws_trees_in_training_and_parses_greedily_in_evaluation():
    """`listops_spinn_gumbel`: in training the trees are drawn (valid, a discrete stack) and
    the label's loss alone reaches the parser; evaluation parses greedily."""
    model, batch = model_and_batch("spinn_gumbel")
    model.train()
    torch.manual_seed(0)
    output = model(**batch)
    assert output["transitions_source"][0] == "straight_through"
    for row, meta in zip(output["transitions"].tolist(), batch["metadata"]):
        assert is_valid([t for t in row if t != PAD], len(meta["tokens"]))
    output["loss"].backward()
    classifier = model._encoder.spinn.tracker.transition_classifier
    assert classifier.weight.grad is not None and classifier.weight.grad.abs().sum() > 0
    model.eval()
    assert model(**batch)["transitions_source"][0] == "predicted"


def test_model3_adds_the_transition_loss():
    model, batch = model_and_batch("spinn_model3")
    model.train()
    torch.manual_seed(0)
    with_loss = model(**batch)["loss"].item()
    model._transition_loss_weight = 0.0
    torch.manual_seed(0)
    without = model(**batch)["loss"].item()
    # The untrained parser's cross-entropy is about log 2 per step.
    assert with_loss - without == pytest.approx(0.69, rel=0.3)


def test_accuracy_per_length_bucket_adds_up_to_the_accuracy():
    model, batch = model_and_batch("spinn_pi_nt")
    lengths = batch["tokens"]["tokens"]["tokens"].ne(0).sum(dim=1)
    model._length_buckets = [int(lengths.median())]  # some examples on each side
    model._bucket_accuracy = {
        name: type(model._accuracy)()
        for name in spinn_classifier._bucket_names(model._length_buckets)
    }
    model.eval()
    model(**batch)
    metrics = model.get_metrics(reset=True)
    bound = model._length_buckets[0]
    short = int((lengths <= bound).sum())
    assert 0 < short < len(lengths)
    combined = (
        metrics[f"accuracy_tokens_le_{bound}"] * short
        + metrics[f"accuracy_tokens_gt_{bound}"] * (len(lengths) - short)
    ) / len(lengths)
    assert combined == pytest.approx(metrics["accuracy"])


def test_models_without_parser_report_accuracy_only():
    for variant in ("lstm", "spinn_pi_nt", "spinn_pi_nt_balanced"):
        model, batch = model_and_batch(variant)
        model(**batch)
        metrics = set(model.get_metrics(reset=True))
        assert metrics == {"accuracy", "accuracy_tokens_le_100"}  # no line over 100 tokens


def test_basic_classifier_with_the_wrong_input_dim_says_which_setting_at_its_first_batch():
    """AllenNLP's `basic_classifier` never compares its embedder with its encoder: the spinn
    encoder says which setting to change at the first batch (not torch's `mat1 and mat2 shapes
    cannot be multiplied`)."""
    params = Params.from_file(
        str(FIXTURES_ROOT / "classification" / "basic_classifier_spinn.jsonnet"),
        params_overrides=as_json({"model.seq2vec_encoder.input_dim": 13}),
        ext_vars={"FIXTURES": str(FIXTURES_ROOT)},
    )
    reader = DatasetReader.from_params(params["dataset_reader"])
    instances = list(reader.read(params["train_data_path"]))[:4]
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params["model"])
    batch = Batch(instances)
    batch.index_instances(vocab)
    with pytest.raises(
        ConfigurationError, match=r"its input_dim is 13: set the encoder's input_dim"
    ):
        model(**batch.as_tensor_dict())
