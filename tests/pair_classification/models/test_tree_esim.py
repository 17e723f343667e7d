"""The syntactic tree-LSTM inference model (Chen et al. 2017) on its shipped config, at small
sizes, on real SNLI lines."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch
from allennlp.models import Model

from spinn_allennlp.data.tree_sources import RightBranchingTrees
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from spinn_core.transitions import PAD
from tools.testing.configs import (
    SNLI_SAMPLE,
    as_json,
    attention_small_overrides,
    snli_config,
)


class TestTreeEsim(SpinnModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.config = snli_config("tree_esim")
        self.overrides = attention_small_overrides("tree_esim")
        self.set_up_model_with_overrides(self.config, SNLI_SAMPLE, self.overrides)

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(
            self.config, overrides=as_json(self.overrides), seed=0
        )
        self.ensure_batch_predictions_are_consistent()

    def test_composes_over_the_gold_trees(self):
        self.model.eval()
        batch = self.dataset.as_tensor_dict()
        output = self.model.make_output_human_readable(self.model(**batch))
        for side in ("premise", "hypothesis"):
            followed = output[f"{side}_transitions"]
            gold = batch[f"{side}_transitions"]
            torch.testing.assert_close(followed, gold[:, : followed.size(1)])
            assert (gold[:, followed.size(1) :] == PAD).all()
            assert set(output[f"{side}_transitions_source"]) == {"gold"}
        first = self.instances[0]["metadata"]
        assert (
            output["premise_tree"][0].replace("( ", "").replace(" )", "").split()
            == (first["premise_tokens"])
        )

    def test_the_tree_changes_the_prediction(self):
        """Trees are used: a right-branching tree instead of the gold one moves the output."""
        self.model.eval()
        batch = self.dataset.as_tensor_dict()
        gold = self.model(**batch)["probs"]
        reader = SnliTransitionsReader(tree_source=RightBranchingTrees())
        raw = [
            reader.text_to_instance(m["premise_tokens"], m["hypothesis_tokens"])
            for m in (instance["metadata"].metadata for instance in self.instances)
        ]
        for instance in raw:
            reader.apply_token_indexers(instance)
        other = Batch(raw)
        other.index_instances(self.vocab)
        output = self.model.make_output_human_readable(self.model(**other.as_tensor_dict()))
        assert set(output["premise_transitions_source"]) == {"right_branching"}
        assert not torch.allclose(output["probs"], gold)

    def test_esim_and_the_tree_model_check_their_own_pooled_size(self):
        """One constructor builds both; each pools its own number of vectors of the inference
        encoder's size (ESIM 4: average and max per side; the tree model 6: and the roots)."""
        for variant, wrong in (("esim", 60), ("tree_esim", 40)):
            overrides = attention_small_overrides(
                variant, **{"model.output_feedforward.input_dim": wrong}
            )
            params = Params.from_file(str(snli_config(variant)), as_json(overrides))
            with pytest.raises(ConfigurationError, match="pooled vector dim"):
                Model.from_params(vocab=self.vocab, params=params["model"])
