"""`spinn_classifier` on single sentences with real trees: the shipped config
`training_config/classification/text_spinn.jsonnet` (reader `text_classification_transitions`,
full SPINN) on 24 SST dev sentences (12 positive, 12 negative), two thirds with their binary
parse."""

import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from spinn_allennlp.testing import CONFIGS_ROOT, FIXTURES_ROOT
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from spinn_core.transitions import PAD, is_valid
from tools.testing.configs import as_json

CONFIG = CONFIGS_ROOT / "classification" / "text_spinn.jsonnet"
SAMPLE = FIXTURES_ROOT / "classification" / "sst_dev_parses_sample.jsonl"
SMALL = {
    "train_data_path": str(SAMPLE),
    "validation_data_path": str(SAMPLE),
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "model.encoder.input_dim": 12,
    "model.encoder.hidden_dim": 10,
    "model.encoder.tracker.tracking_dim": 6,
    "model.mlp_dim": 8,
    "trainer.num_epochs": 1,
    "data_loader": {"batch_sampler": None, "batch_size": 8},
}


class TestTextSpinn(SpinnModelTestCase):
    def test_train_save_load_and_batch_consistency(self):
        self.set_up_model_with_overrides(CONFIG, SAMPLE, SMALL)
        # Every parameter gets a gradient: the parser from the parsed lines' transition loss.
        self.ensure_model_can_train_save_and_load(CONFIG, overrides=as_json(SMALL), seed=0)
        self.ensure_batch_predictions_are_consistent()


def test_gold_trees_where_given_the_parsers_elsewhere_and_its_own_at_evaluation():
    torch.manual_seed(0)
    params = Params.from_file(str(CONFIG), as_json(SMALL))
    reader = DatasetReader.from_params(params["dataset_reader"])
    instances = list(reader.read(str(SAMPLE)))
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params["model"])
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    model.train()
    output = model(**tensors)
    output["loss"].backward()
    assert bool(model._encoder.spinn.tracker.transition_classifier.weight.grad.any())
    for row, instance in enumerate(instances):
        gold = instance["transitions"].tensor.tolist()
        followed = [t for t in output["transitions"][row].tolist() if t != PAD]
        if gold:
            assert followed == gold and output["transitions_source"][row] == "gold"
        else:
            assert output["transitions_source"][row] == "predicted"
            assert is_valid(followed, len(instance["metadata"]["tokens"]))
    model.get_metrics(reset=True)
    model.eval()
    output = model.make_output_human_readable(model(**tensors))
    assert output["transitions_source"] == ["predicted"] * len(instances)
    metrics = model.get_metrics(reset=True)
    assert metrics["valid_tree_rate"] == 1.0 and 0.0 <= metrics["bracket_f1"] <= 1.0
    for tree, instance in zip(output["tree"], instances):
        assert tree.replace("( ", "").replace(" )", "").split() == instance["metadata"]["tokens"]
