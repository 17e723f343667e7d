"""A model archived by an older release keeps loading, and answers the same."""

import json

import pytest
from allennlp.data.data_loaders import SimpleDataLoader
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor
from allennlp.training.util import evaluate

from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.policies import BeamSearch, Greedy
from tools.testing.configs import SNLI_SAMPLE

ARCHIVES = FIXTURES_ROOT / "pair_classification" / "archives"
RAW_PAIRS = FIXTURES_ROOT / "pair_classification" / "snli" / "raw_pairs.jsonl"


@pytest.fixture(scope="module")
def archive():
    return load_archive(str(ARCHIVES / "spinn_v0.1.0.tar.gz"))


def test_v0_1_0_archive_predicts_what_it_did(archive):
    predictor = Predictor.from_archive(archive)  # the model's default predictor, "spinn_nli"
    inputs = [json.loads(line) for line in RAW_PAIRS.read_text().splitlines()]
    expected = [
        json.loads(line)
        for line in (ARCHIVES / "spinn_v0.1.0.raw_pairs.predictions.jsonl").read_text().splitlines()
    ]
    predictions = predictor.predict_batch_json(inputs)
    assert len(predictions) == len(expected)
    for new, old in zip(predictions, expected):
        assert new["label"] == old["label"]
        assert new["premise_tree"] == old["premise_tree"]
        assert new["hypothesis_tree"] == old["hypothesis_tree"]
        assert new["premise_transitions_source"] == old["premise_transitions_source"]
        assert new["probs"] == pytest.approx(old["probs"], abs=1e-5)


def test_v0_1_0_archive_evaluates_as_it_did(archive):
    instances = list(archive.dataset_reader.read(SNLI_SAMPLE))
    loader = SimpleDataLoader(instances, batch_size=32, vocab=archive.model.vocab)
    metrics = evaluate(archive.model, loader)
    expected = json.loads((ARCHIVES / "spinn_v0.1.0.snli_sample.metrics.json").read_text())
    for name in ("accuracy", "transition_accuracy", "tree_accuracy", "valid_tree_rate"):
        assert metrics[name] == pytest.approx(expected[name], abs=1e-9), name


def test_v0_1_0_archive_evaluates_with_a_beam():
    """A beam is an evaluation setting: an archive trained without one evaluates with one
    through an override, its parser's trees still valid; width 1 gives the archive's own
    numbers back."""
    expected = json.loads((ARCHIVES / "spinn_v0.1.0.snli_sample.metrics.json").read_text())
    # The old key (translated) and the new form, `evaluation_policy`.
    overrides = [
        ({"model.encoder.beam_size": 1}, Greedy),
        ({"model.encoder.beam_size": 4}, BeamSearch),
        ({"model.encoder.evaluation_policy": {"type": "beam_search", "width": 4}}, BeamSearch),
    ]
    for override, policy in overrides:
        beam = load_archive(str(ARCHIVES / "spinn_v0.1.0.tar.gz"), overrides=json.dumps(override))
        chosen = beam.model._encoder.evaluation_policy
        assert type(chosen) is policy
        width = getattr(chosen, "width", 1)
        instances = list(beam.dataset_reader.read(SNLI_SAMPLE))
        loader = SimpleDataLoader(instances, batch_size=32, vocab=beam.model.vocab)
        metrics = evaluate(beam.model, loader)
        assert metrics["valid_tree_rate"] == 1.0
        if width == 1:
            assert metrics["accuracy"] == pytest.approx(expected["accuracy"], abs=1e-9)
            assert metrics["tree_accuracy"] == pytest.approx(expected["tree_accuracy"], abs=1e-9)
