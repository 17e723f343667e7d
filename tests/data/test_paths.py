import pytest

from spinn_allennlp.data.paths import expand_path, resolve_data_path


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


def test_missing_default_names_the_variable_to_set(monkeypatch, tmp_path):
    monkeypatch.delenv("SNLI_TRAIN", raising=False)
    monkeypatch.chdir(tmp_path)  # not the repository root: the bundled default isn't here
    with pytest.raises(FileNotFoundError) as error:
        resolve_data_path("${SNLI_TRAIN:-data/snli/snli_1.0_train_0.01.jsonl.gz}")
    message = str(error.value)
    assert "'data/snli/snli_1.0_train_0.01.jsonl.gz' not found" in message
    assert f"relative to the current directory, {tmp_path}" in message
    assert "set SNLI_TRAIN to the file's path" in message
    # Set to a file that isn't there: says where the path came from.
    monkeypatch.setenv("SNLI_TRAIN", str(tmp_path / "train.jsonl"))
    with pytest.raises(FileNotFoundError, match="It comes from SNLI_TRAIN="):
        resolve_data_path("${SNLI_TRAIN:-data/snli/snli_1.0_train_0.01.jsonl.gz}")
    # A file that is there, and URLs (AllenNLP downloads them), pass through.
    (tmp_path / "train.jsonl").write_text("{}\n")
    assert resolve_data_path("${SNLI_TRAIN:-x}") == str(tmp_path / "train.jsonl")
    assert resolve_data_path("https://example.org/snli.jsonl") == "https://example.org/snli.jsonl"
