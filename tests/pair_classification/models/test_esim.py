"""ESIM (Chen et al. 2017) on its shipped config, at small sizes, on real SNLI lines."""

from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.models import Model

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from tools.testing.configs import (
    SNLI_SAMPLE,
    as_json,
    attention_small_overrides,
    snli_config,
)


class TestEsim(SpinnModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.config = snli_config("esim")
        self.overrides = attention_small_overrides("esim")
        self.set_up_model_with_overrides(self.config, SNLI_SAMPLE, self.overrides)

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(
            self.config, overrides=as_json(self.overrides), seed=0
        )
        self.ensure_batch_predictions_are_consistent()

    def test_transitions_are_ignored(self):
        """ESIM reads words in order: the same output with or without the parses."""
        self.model.eval()
        batch = self.dataset.as_tensor_dict()
        with_trees = self.model(**batch)["probs"]
        without = {k: v for k, v in batch.items() if not k.endswith("_transitions")}
        assert (self.model(**without)["probs"] == with_trees).all()

    def test_paper_sizes(self):
        """The shipped config has the paper's 4.3M parameters (Table 1, "600D ESIM") besides
        the embeddings."""
        vocab = Vocabulary.from_instances(SnliTransitionsReader().read(SNLI_SAMPLE))
        model = Model.from_params(vocab=vocab, params=Params.from_file(str(self.config))["model"])
        count = sum(p.numel() for n, p in model.named_parameters() if "_embedder" not in n)
        assert round(count / 1e6, 1) == 4.3
