"""The NLI model with each of the paper's four configs, on real SNLI lines (fixtures)."""

import logging

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Vocabulary
from allennlp.data.samplers import BucketBatchSampler
from allennlp.models import Model

from spinn_allennlp.data.dataset_readers import LEFT_PAD_TOKEN
from spinn_allennlp.modules.spinn_encoder import UNTRAINED_PARSER_BATCHES
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from spinn_core.transitions import PAD, balanced_transitions, is_valid
from tools.testing.configs import (
    SNLI_ENCODER_SIZES,
    SNLI_SAMPLE,
    as_json,
    snli_config,
    snli_small_overrides,
)


class TestSpinnNliConfigs(SpinnModelTestCase):
    @pytest.mark.parametrize("variant", list(SNLI_ENCODER_SIZES))
    def test_train_save_load_and_batch_consistency(self, variant):
        config = snli_config(variant)
        self.set_up_model(config, SNLI_SAMPLE)
        # Every parameter must get a gradient: nothing in any variant is dead weight.
        self.ensure_model_can_train_save_and_load(
            config, overrides=as_json(snli_small_overrides(variant)), seed=0
        )
        self.ensure_batch_predictions_are_consistent()


def model_and_batch(variant):
    test = ModelTestCase()
    test.set_up_model(snli_config(variant), SNLI_SAMPLE)
    return test.model.eval(), test.dataset.as_tensor_dict()


def test_full_spinn_reports_parse_metrics_and_trees():
    model, batch = model_and_batch("spinn")
    output = model.make_output_human_readable(model(**batch))
    metrics = model.get_metrics(reset=True)
    assert set(metrics) == {
        "accuracy",
        "transition_accuracy",
        "tree_accuracy",
        "valid_tree_rate",
        "bracket_f1",
    }
    # At evaluation the full SPINN follows its own (legal-by-construction) parse.
    assert metrics["valid_tree_rate"] == 1.0
    assert 0.0 <= metrics["transition_accuracy"] <= 1.0
    assert output["premise_transitions_source"][0] == "predicted"
    for tree, meta in zip(output["premise_tree"], output["metadata"]):
        assert tree.replace("( ", "").replace(" )", "").split() == meta["premise_tokens"]
    for row in output["hypothesis_transitions"].tolist():
        sequence = [t for t in row if t != PAD]
        assert is_valid(sequence, sequence.count(0))
    assert len(output["label"]) == len(output["label_probs"]) == batch["label"].size(0)
    for probs in output["label_probs"]:
        assert set(probs) == {"entailment", "neutral", "contradiction"}
        assert abs(sum(probs.values()) - 1.0) < 1e-5


def test_models_without_parser_report_accuracy_only():
    for variant in ("lstm", "spinn_pi_nt", "spinn_pi"):
        model, batch = model_and_batch(variant)
        model(**batch)
        assert set(model.get_metrics(reset=True)) == {"accuracy"}


def test_transition_loss_is_weighted_by_alpha():
    model, batch = model_and_batch("spinn")
    torch.manual_seed(0)
    with_alpha = model(**batch)["loss"].item()
    model._transition_loss_weight = 0.0
    without = model(**batch)["loss"].item()
    # The transition cross-entropy is about log 2 per step for an untrained parser.
    assert with_alpha - without == pytest.approx(3.9 * 2 * 0.69, rel=0.3)


def test_embedding_and_encoder_sizes_must_match():
    vocab = Vocabulary.from_instances(SnliTransitionsReader().read(SNLI_SAMPLE))
    overrides = snli_small_overrides("spinn_pi_nt", **{"model.encoder.input_dim": 13})
    params = Params.from_file(str(snli_config("spinn_pi_nt")), as_json(overrides))
    # The settings to change, with the sizes, before any reading or training.
    with pytest.raises(ConfigurationError, match=r"set encoder\.input_dim to 12"):
        Model.from_params(vocab=vocab, params=params["model"])


def test_readable_trees_in_the_papers_fixed_length_mode():
    """crop_pad_length: gold trees sit on left padding, a stack of trees whose top one is the
    sentence's. The policy Given(left_padded=True) composes it; without it the forest is refused
    (it is also what a gold tree missing REDUCEs looks like)."""
    reader = SnliTransitionsReader(crop_pad_length=25)
    instances = list(reader.read(SNLI_SAMPLE))[:4]
    vocab = Vocabulary.from_instances(SnliTransitionsReader().read(SNLI_SAMPLE))
    left_padded = {"type": "given", "left_padded": True}

    def model_with(**encoder):
        settings = {f"model.encoder.{key}": value for key, value in encoder.items()}
        overrides = snli_small_overrides("spinn_pi_nt", **settings)
        params = Params.from_file(str(snli_config("spinn_pi_nt")), as_json(overrides))
        return Model.from_params(vocab=vocab, params=params["model"]).eval()

    batch = Batch(instances)
    batch.index_instances(vocab)
    with pytest.raises(ValueError, match=r"left_padded=True"):
        model_with()(**batch.as_tensor_dict())
    model = model_with(training_policy=left_padded, evaluation_policy=left_padded)
    output = model.make_output_human_readable(model(**batch.as_tensor_dict()))
    for tree, meta in zip(output["premise_tree"], output["metadata"]):
        words = [t for t in meta["premise_tokens"] if t != LEFT_PAD_TOKEN]
        assert tree.replace("( ", "").replace(" )", "").split() == words


@pytest.mark.parametrize("variant", list(SNLI_ENCODER_SIZES))
def test_pairs_encoded_together_equal_separate_calls(variant):
    """Premise and hypothesis in one encoder call (the default) give what two calls give, in
    evaluation mode (float64: only rounding differs, 1e-10 claims equality)."""
    model, batch = model_and_batch(variant)
    model.double()
    model._encode_pairs_together = True
    together = model(**batch)
    model._encode_pairs_together = False
    separate = model(**batch)
    torch.testing.assert_close(together["probs"], separate["probs"], atol=1e-10, rtol=0)
    torch.testing.assert_close(together["loss"], separate["loss"], atol=1e-10, rtol=0)
    for side in ("premise", "hypothesis"):
        key = f"{side}_transitions"
        assert (key in together) == (key in separate)
        if key in together:
            assert torch.equal(together[key], separate[key])


def test_typed_reduce_reports_labeled_f1_and_trains_the_type_classifier():
    model, batch = model_and_batch("spinn_typed")
    assert "premise_reduce_types" in batch
    model.train()
    model(**batch)["loss"].backward()
    assert model._encoder.spinn.type_classifier.weight.grad.abs().sum() > 0
    model.eval()
    model(**batch)
    metrics = model.get_metrics(reset=True)
    assert 0.0 <= metrics["labeled_bracket_f1"] <= metrics["bracket_f1"] <= 1.0


@pytest.mark.parametrize(
    "variant",
    [
        "spinn_model2",
        "spinn_model3",
        "spinn_model4",
        "spinn_reinforce",
        "spinn_gumbel",
        "spinn_soft_annealed",
        "spinn_ppo",
        "spinn_best_draw",
    ],
)
def test_latent_tree_configs_train_their_parser(variant):
    """NSHRDLU Models 2-4 on SNLI (the full ModelTestCase runs their ListOps twins): a training
    batch reaches the parser (Model 4 from the label's loss alone), and evaluation follows the
    model's own trees."""
    model, batch = model_and_batch(variant)
    model.train()
    model(**batch)["loss"].backward()
    classifier = model._encoder.spinn.tracker.transition_classifier
    assert classifier.weight.grad is not None and classifier.weight.grad.abs().sum() > 0
    model.eval()
    output = model(**batch)
    expected = "soft" if variant in ("spinn_model3", "spinn_model4") else "predicted"
    assert output["premise_transitions_source"][0] == expected
    assert 0.0 <= model.get_metrics(reset=True)["bracket_f1"] <= 1.0


def small_model_and_batch(variant, **overrides):
    """The shipped config of `variant` at the suite's small sizes, untrained, and the SNLI
    sample as one batch."""
    reader = SnliTransitionsReader()
    instances = list(reader.read(SNLI_SAMPLE))
    vocab = Vocabulary.from_instances(instances)
    params = Params.from_file(
        str(snli_config(variant)), as_json(snli_small_overrides(variant, **overrides))
    )
    model = Model.from_params(vocab=vocab, params=params["model"])
    batch = Batch(instances)
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict()


ENCODER_LOGGER = "spinn_allennlp.modules.spinn_encoder"


@pytest.mark.parametrize("alpha", [0.0, 3.9])
def test_a_parser_nothing_trains_is_reported_even_with_a_zero_weighted_loss(caplog, alpha):
    """The full SPINN with `transition_loss_weight` 0: the parser never learns, and the
    encoder's warning says so and names the setting (a loss weighted by zero must not count as
    training the parser); with the paper's 3.9, the parser is trained and nothing is said."""
    torch.manual_seed(0)
    model, batch = small_model_and_batch("spinn", **{"model.transition_loss_weight": alpha})
    model.train()
    caplog.set_level(logging.WARNING, logger=ENCODER_LOGGER)
    classifier = model._encoder.spinn.tracker.transition_classifier.weight
    for _ in range(UNTRAINED_PARSER_BATCHES):
        model.zero_grad()
        model(**batch)["loss"].backward()
    messages = [r.getMessage() for r in caplog.records if r.name == ENCODER_LOGGER]
    if alpha == 0.0:
        assert classifier.grad is None or not bool(classifier.grad.any())
        assert len(messages) == 1, messages
        assert "no gradient has reached the parser" in messages[0]
        assert "transition_loss_weight" in messages[0]
    else:
        assert bool(classifier.grad.any()) and messages == []


MIXED = FIXTURES_ROOT / "pair_classification" / "snli" / "mixed_parses.jsonl"


def mixed_model_and_batch(variant):
    """`variant` at small sizes, and one batch of a file whose even lines have binary parses and
    odd lines none (no tree source)."""
    torch.manual_seed(0)
    reader = SnliTransitionsReader()
    instances = list(reader.read(MIXED))
    assert len(instances) == 10 and not reader.skipped
    vocab = Vocabulary.from_instances(instances)
    params = Params.from_file(str(snli_config(variant)), as_json(snli_small_overrides(variant)))
    model = Model.from_params(vocab=vocab, params=params["model"])
    # The bucket sampler sorts by any field, transitions included: every line has them all.
    sampler = BucketBatchSampler(batch_size=4, sorting_keys=["premise_transitions"])
    assert sorted(i for batch in sampler.get_batch_indices(instances) for i in batch) == list(
        range(10)
    )
    batch = Batch(instances)  # AllenNLP refused mixed lines: "non-homogeneous Instances"
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict(), instances


def test_a_file_mixing_lines_with_and_without_parses_pi_nt():
    """Without a parser, the lines without a parse get the balanced default tree and the others
    their gold tree, in one batch."""
    model, batch, instances = mixed_model_and_batch("spinn_pi_nt")
    model.double().eval()
    output = model.make_output_human_readable(model(**batch))
    for row, instance in enumerate(instances):
        words = len(instance["metadata"]["premise_tokens"])
        followed = [t for t in output["premise_transitions"][row].tolist() if t != PAD]
        if row % 2 == 0:
            assert followed == instance["premise_transitions"].tensor.tolist()
            assert output["premise_transitions_source"][row] == "gold"
        else:
            assert followed == balanced_transitions(words)
            assert output["premise_transitions_source"][row] == "balanced default tree"


def test_a_file_mixing_lines_with_and_without_parses_full_spinn():
    """With a parser, in training: gold trees are followed (and train the parser) where the
    line has them; the other sentences follow the parser's own (valid) trees."""
    model, batch, instances = mixed_model_and_batch("spinn")
    model.train()
    output = model(**batch)
    output["loss"].backward()
    assert bool(model._encoder.spinn.tracker.transition_classifier.weight.grad.any())
    for side in ("premise", "hypothesis"):
        sources = output[f"{side}_transitions_source"]
        assert sources == ["gold", "predicted"] * 5
        for row, instance in enumerate(instances):
            followed = [t for t in output[f"{side}_transitions"][row].tolist() if t != PAD]
            words = len(instance["metadata"][f"{side}_tokens"])
            if row % 2 == 0:
                assert followed == instance[f"{side}_transitions"].tensor.tolist()
            else:
                assert is_valid(followed, words)
    model.get_metrics(reset=True)
    model.eval()
    output = model(**batch)
    assert output["premise_transitions_source"] == ["predicted"] * 10
    assert 0.0 <= model.get_metrics(reset=True)["transition_accuracy"] <= 1.0
