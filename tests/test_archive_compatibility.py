"""Models archived by 0.2.0 (one per encoder path, see fixtures/archives/v0.2.0/README.md) keep
loading and answer what they answered then: the same labels, trees and probabilities, and the
same metrics on the task's sample."""

import json

import pytest
from allennlp.data.data_loaders import SimpleDataLoader
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor
from allennlp.training.util import evaluate

from spinn_allennlp.testing import FIXTURES_ROOT
from tools.testing.configs import LISTOPS_SAMPLE, SNLI_SAMPLE

ARCHIVES = FIXTURES_ROOT / "archives" / "v0.2.0"
RAW_PAIRS = FIXTURES_ROOT / "pair_classification" / "snli" / "raw_pairs.jsonl"
SNLI_MODELS = ["spinn_typed", "spinn_model3", "spinn_pi_nt", "tree_esim"]
LISTOPS_MODELS = ["listops_spinn_summaries"]
# Values computed by the same float32 operations in the same order: equal up to the printed
# digits of JSON floats, far below these bounds.
PROBABILITY_TOLERANCE = 1e-6


def expected_predictions(name):
    lines = (ARCHIVES / f"{name}.predictions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def without_padding(value):
    """Transitions predicted in a batch are padded to its longest sentence (PAD = -1)."""
    while isinstance(value, list) and value and value[-1] == -1:
        value = value[:-1]
    return value


def assert_same_answers(new, old):
    for key, value in old.items():
        if key in ("logits", "probs", "loss", "label_probs"):
            continue
        assert without_padding(new[key]) == without_padding(value), key
    assert new["probs"] == pytest.approx(old["probs"], abs=PROBABILITY_TOLERANCE)


@pytest.mark.parametrize("name", SNLI_MODELS)
def test_v0_2_0_nli_archives_predict_what_they_did(name):
    archive = load_archive(str(ARCHIVES / f"{name}.tar.gz"))
    predictor = Predictor.from_archive(archive)
    inputs = [json.loads(line) for line in RAW_PAIRS.read_text().splitlines()]
    predictions = predictor.predict_batch_json(inputs)
    expected = expected_predictions(name)
    assert len(predictions) == len(expected)
    for new, old in zip(predictions, expected):
        assert_same_answers(new, old)
    assert_same_metrics(archive, name, SNLI_SAMPLE)


@pytest.mark.parametrize("name", LISTOPS_MODELS)
def test_v0_2_0_listops_archives_predict_what_they_did(name):
    archive = load_archive(str(ARCHIVES / f"{name}.tar.gz"))
    predictor = Predictor.from_archive(archive, "text_classifier")
    instances = list(archive.dataset_reader.read(LISTOPS_SAMPLE))
    predictions = predictor.predict_batch_instance(instances)
    expected = expected_predictions(name)
    assert len(predictions) == len(expected)
    for new, old in zip(predictions, expected):
        assert_same_answers(json.loads(json.dumps(new)), old)
    assert_same_metrics(archive, name, LISTOPS_SAMPLE)


def assert_same_metrics(archive, name, sample):
    instances = list(archive.dataset_reader.read(sample))
    loader = SimpleDataLoader(instances, batch_size=64, vocab=archive.model.vocab)
    metrics = evaluate(archive.model, loader)
    expected = json.loads((ARCHIVES / f"{name}.metrics.json").read_text())
    for key, value in expected.items():
        tolerance = 1e-5 if key == "loss" else 1e-9
        assert metrics[key] == pytest.approx(value, abs=tolerance), key
