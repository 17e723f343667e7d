"""The NLI model with each of the paper's four configs, on real SNLI lines (fixtures)."""
import copy
import json

import pytest
import torch
from allennlp.common.testing import ModelTestCase

from allennlp.data import Batch

from spinn_allennlp.core.transitions import PAD, is_valid
from spinn_allennlp.nli.dataset_reader import LEFT_PAD_TOKEN, SnliTransitionsReader

from tests.conftest import FIXTURES, ROOT

SAMPLE = FIXTURES / "snli" / "snli_sample.jsonl"
# Small sizes keep the test fast; everything else is the config as shipped.
SMALL = {
    "train_data_path": str(SAMPLE),
    "validation_data_path": str(SAMPLE),
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "model.mlp_dim": 16,
    "trainer.num_epochs": 1,
    # AllenNLP's bucket sampler draws random noise each pass: the save/load check needs the
    # same first batch twice, so the test uses a plain sequential loader.
    "data_loader": {"batch_sampler": None, "batch_size": 8},
}
ENCODER_SIZES = {
    "lstm": {"model.encoder.input_size": 12, "model.encoder.hidden_size": 10},
    "spinn_pi_nt": {"model.encoder.input_dim": 12, "model.encoder.hidden_dim": 10},
    "spinn_pi": {"model.encoder.input_dim": 12, "model.encoder.hidden_dim": 10,
                 "model.encoder.tracking_dim": 6},
    "spinn": {"model.encoder.input_dim": 12, "model.encoder.hidden_dim": 10,
              "model.encoder.tracking_dim": 6},
}


def overrides(name):
    return json.dumps({**SMALL, **ENCODER_SIZES[name]})


class TestNliConfigs(ModelTestCase):
    def check_model_computes_gradients_correctly(self, model, *args, **kwargs):
        # AllenNLP runs this training-mode pass on the trained model only, just before comparing
        # it with the loaded copy; it would move the batch-norm running statistics of one of the
        # two. Keep the check, undo its side effect.
        state = copy.deepcopy(model.state_dict())
        result = ModelTestCase.check_model_computes_gradients_correctly(model, *args, **kwargs)
        model.load_state_dict(state)
        return result

    @pytest.mark.parametrize("name", list(ENCODER_SIZES))
    def test_train_save_load_and_batch_consistency(self, name, tmp_path):
        config = ROOT / "training_config" / f"{name}.jsonnet"
        self.set_up_model(config, SAMPLE)
        # Every parameter must get a gradient: nothing in any variant is dead weight.
        self.ensure_model_can_train_save_and_load(config, overrides=overrides(name), seed=0)
        self.ensure_batch_predictions_are_consistent()


def test_full_spinn_reports_parse_metrics_and_trees():
    test = ModelTestCase()
    config = ROOT / "training_config" / "spinn.jsonnet"
    test.set_up_model(config, SAMPLE)
    model = test.model.eval()
    batch = test.dataset.as_tensor_dict()
    output = model.make_output_human_readable(model(**batch))
    metrics = model.get_metrics(reset=True)
    assert set(metrics) == {"accuracy", "transition_accuracy", "tree_accuracy", "valid_tree_rate"}
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


def test_transition_loss_is_weighted_by_alpha():
    test = ModelTestCase()
    test.set_up_model(ROOT / "training_config" / "spinn.jsonnet", SAMPLE)
    model = test.model.eval()
    batch = test.dataset.as_tensor_dict()
    torch.manual_seed(0)
    with_alpha = model(**batch)["loss"].item()
    model._transition_loss_weight = 0.0
    without = model(**batch)["loss"].item()
    # The transition cross-entropy is about log 2 per step for an untrained parser.
    assert with_alpha - without == pytest.approx(3.9 * 2 * 0.69, rel=0.3)


def test_readable_trees_in_the_papers_fixed_length_mode():
    """crop_pad_length: gold trees sit on left padding; a parser may also parse the padding."""
    test = ModelTestCase()
    test.set_up_model(ROOT / "training_config" / "spinn_pi_nt.jsonnet", SAMPLE)
    reader = SnliTransitionsReader(crop_pad_length=25)
    instances = list(reader.read(SAMPLE))[:4]
    batch = Batch(instances)
    batch.index_instances(test.model.vocab)
    model = test.model.eval()
    output = model.make_output_human_readable(model(**batch.as_tensor_dict()))
    for tree, meta in zip(output["premise_tree"], output["metadata"]):
        words = [t for t in meta["premise_tokens"] if t != LEFT_PAD_TOKEN]
        assert tree.replace("( ", "").replace(" )", "").split() == words
