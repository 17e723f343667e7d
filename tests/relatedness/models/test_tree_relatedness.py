"""The relatedness model with each shipped config, on real SICK rows (fixtures)."""

import pytest
import torch
from allennlp.common.testing import ModelTestCase
from scipy import stats

from spinn_allennlp.relatedness.models import sparse_target
from spinn_allennlp.testing.model_test_case import SpinnModelTestCase
from tools.testing.configs import (
    SICK_SAMPLE,
    as_json,
    sick_config,
    sick_small_overrides,
)


class TestTreeRelatednessConfigs(SpinnModelTestCase):
    @pytest.mark.parametrize("encoder", ["spinn_pi_nt", "child_sum", "lstm"])
    def test_train_save_load_and_batch_consistency(self, encoder):
        config = sick_config(encoder)
        self.set_up_model(config, SICK_SAMPLE)
        self.ensure_model_can_train_save_and_load(
            config, overrides=as_json(sick_small_overrides(encoder)), seed=0
        )
        self.ensure_batch_predictions_are_consistent()


def test_sparse_target_has_the_score_as_expectation():
    scores = torch.tensor([1.0, 1.3, 2.5, 3.0, 4.7, 5.0], dtype=torch.float64)
    target = sparse_target(scores, 5)
    ratings = torch.arange(1, 6, dtype=torch.float64)
    torch.testing.assert_close(target.sum(dim=1), torch.ones(6, dtype=torch.float64))
    torch.testing.assert_close(target @ ratings, scores)
    assert target[1].tolist() == pytest.approx([0.7, 0.3, 0, 0, 0])
    assert target[5].tolist() == [0, 0, 0, 0, 1]
    assert bool((target >= 0).all()) and bool(((target > 0).sum(dim=1) <= 2).all())


def test_loss_prediction_and_metrics():
    test = ModelTestCase()
    test.set_up_model(sick_config("spinn_pi_nt"), SICK_SAMPLE)
    model, batch = test.model.eval(), test.dataset.as_tensor_dict()
    output = model(**batch)
    probs, gold = output["probs"], batch["relatedness"].to(output["probs"].dtype)
    ratings = torch.arange(1, 6, dtype=probs.dtype)
    torch.testing.assert_close(output["score"], probs @ ratings)
    target = sparse_target(gold, 5)
    kl = (target * (target.clamp(min=1e-30).log() - probs.log())).sum(dim=1).mean()
    torch.testing.assert_close(output["loss"], kl)
    metrics = model.get_metrics(reset=True)
    score, gold = output["score"].detach().numpy(), gold.numpy()
    assert metrics["pearson"] == pytest.approx(stats.pearsonr(score, gold)[0], abs=1e-5)
    assert metrics["spearman"] == pytest.approx(stats.spearmanr(score, gold)[0], abs=1e-5)
    assert metrics["mse"] == pytest.approx(float(((score - gold) ** 2).mean()), rel=1e-5)
    readable = model.make_output_human_readable(output)
    assert len(readable["relatedness"]) == len(gold)
