"""HIM (Chen et al. 2017): ESIM and the tree model with their probabilities averaged."""

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Vocabulary
from allennlp.models.archival import load_archive

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.pair_classification.models import HimNli
from spinn_allennlp.pair_classification.models.him import archive_him
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase, archive_untrained
from tools.testing.configs import (
    SNLI_SAMPLE,
    as_json,
    attention_small_overrides,
    snli_config,
)


class TestHim(SpinnModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.config = snli_config("him")
        self.overrides = attention_small_overrides("him")
        self.set_up_model_with_overrides(self.config, SNLI_SAMPLE, self.overrides)

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(
            self.config, overrides=as_json(self.overrides), seed=0
        )
        self.ensure_batch_predictions_are_consistent()

    def test_averages_the_members_and_counts_the_oracle(self):
        model = self.model.eval()
        batch = self.dataset.as_tensor_dict()
        output = model(**batch)
        members = model.members
        alone = {name: member(**batch) for name, member in members.items()}
        expected = (alone["esim"]["probs"] + alone["tree"]["probs"]) / 2
        torch.testing.assert_close(output["probs"], expected)
        torch.testing.assert_close(output["esim_probs"], alone["esim"]["probs"])
        # Loss: the members' summed (each trained as alone).
        torch.testing.assert_close(output["loss"], alone["esim"]["loss"] + alone["tree"]["loss"])

        gold = batch["label"]
        right = {name: out["probs"].argmax(-1) == gold for name, out in alone.items()}
        metrics = model.get_metrics(reset=True)
        assert metrics["esim_accuracy"] == pytest.approx(right["esim"].float().mean().item())
        assert metrics["tree_accuracy"] == pytest.approx(right["tree"].float().mean().item())
        either = (right["esim"] | right["tree"]).float().mean().item()
        assert metrics["oracle_accuracy"] == pytest.approx(either)
        assert metrics["accuracy"] == pytest.approx(
            (output["probs"].argmax(-1) == gold).float().mean().item()
        )

        readable = model.make_output_human_readable(output)
        assert readable["label"][0] in ("entailment", "neutral", "contradiction")
        assert set(readable["esim_label_probs"][0]) == {"entailment", "neutral", "contradiction"}
        assert set(readable["premise_transitions_source"]) == {"gold"}

    def test_members_must_share_the_labels(self):
        members = self.model.members
        other = Vocabulary()
        other.add_tokens_to_namespace(["neutral", "entailment", "contradiction"], "labels")
        members["esim"].vocab = other
        with pytest.raises(ConfigurationError, match="orders the labels differently"):
            HimNli(self.vocab, members)


def test_archive_him_averages_members_trained_apart(tmp_path):
    reader = SnliTransitionsReader()
    instances = list(reader.read(SNLI_SAMPLE))
    vocab = Vocabulary.from_instances(instances)
    members = {
        name: archive_untrained(
            snli_config(config), attention_small_overrides(config), tmp_path / name, vocab
        )
        for name, config in (("esim", "esim"), ("tree", "tree_esim"))
    }
    archive_him(members, tmp_path / "him.tar.gz")

    him = load_archive(str(tmp_path / "him.tar.gz"))
    assert isinstance(him.model, HimNli)
    # The tree member's reader (with its tree source) is HIM's reader.
    assert him.config["dataset_reader"]["tree_source"]["type"] == "benepar"
    batch = Batch(instances)
    batch.index_instances(him.model.vocab)
    tensors = batch.as_tensor_dict()
    probs = [load_archive(path).model.eval()(**tensors)["probs"] for path in members.values()]
    output = him.model.eval()(**tensors)
    torch.testing.assert_close(output["probs"], (probs[0] + probs[1]) / 2)
