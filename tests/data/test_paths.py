import pytest

from spinn_allennlp.data.paths import expand_path


def test_default_when_unset_variable_when_set(monkeypatch):
    monkeypatch.delenv("SNLI_TRAIN", raising=False)
    assert expand_path("${SNLI_TRAIN:-data/snli/train.gz}") == "data/snli/train.gz"
    monkeypatch.setenv("SNLI_TRAIN", "/elsewhere/train.jsonl")
    assert expand_path("${SNLI_TRAIN:-data/snli/train.gz}") == "/elsewhere/train.jsonl"
    assert expand_path("plain/path.jsonl") == "plain/path.jsonl"


def test_unset_variable_without_default_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("SNLI_NOWHERE", raising=False)
    with pytest.raises(ValueError, match="SNLI_NOWHERE is not set"):
        expand_path("${SNLI_NOWHERE}/dev.jsonl")
