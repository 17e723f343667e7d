"""SICK entailment through the NLI model (its shipped config), on real SICK rows."""

from spinn_allennlp import plugin  # noqa: F401  (registers the sick reader and the NLI model)
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from tools.testing.configs import (
    SICK_SAMPLE,
    SICK_SMALL,
    SNLI_ENCODER_SIZES,
    as_json,
    sick_entailment_config,
)


class TestSickEntailment(SpinnModelTestCase):
    def test_train_save_load_and_batch_consistency(self):
        config = sick_entailment_config()
        self.set_up_model(config, SICK_SAMPLE)
        overrides = {**SICK_SMALL, **SNLI_ENCODER_SIZES["spinn_pi_nt"], "model.mlp_dim": 16}
        self.ensure_model_can_train_save_and_load(config, overrides=as_json(overrides), seed=0)
        self.ensure_batch_predictions_are_consistent()
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"accuracy"}
