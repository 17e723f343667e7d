"""Every JSON and jsonnet block of the README and docs/ is built as a user would use it, so an
example that raises fails here: an encoder block through `Seq2VecEncoder.from_params` (and run
on a batch), a model block through `Model.from_params`, a reader block through
`DatasetReader.from_params` (and read), data lines through the reader the page names, the
README's prediction through the predictor's own output keys, and fragments of a training config
against what `allennlp train` reads. A block no handler below recognises fails the test: a new
kind of example gets a handler. And every Python block of those pages runs as written, in a
fresh interpreter."""

import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import _jsonnet
import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder

import spinn_allennlp.plugin  # noqa: F401  (registers every component)
from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT
from tools.testing.cli import run_python

DOCUMENTS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)


def blocks(language: Tuple[str, ...]) -> List[Tuple[str, str]]:
    """(where, text) of every fenced block in ``language`` of the documents."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) in language:
                line = text[: match.start()].count("\n") + 1
                found.append(
                    (f"{document.relative_to(PROJECT_ROOT).as_posix()}:{line}", match.group(2))
                )
    return found


JSON_BLOCKS = blocks(("json", "jsonnet"))
PYTHON_BLOCKS = blocks(("python",))


def evaluated(text: str) -> Any:
    """A block as AllenNLP reads a config: jsonnet (comments allowed); a fragment of keys
    (`"model": {...}`) is read inside braces."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        stripped = "{\n" + stripped + "\n}"
    return json.loads(_jsonnet.evaluate_snippet("block", stripped))


def encoder_batch(input_dim: int) -> Tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False], [True] + [False] * 4])
    return torch.randn(3, 5, input_dim), mask


def build_encoder(block: Dict[str, Any]) -> None:
    """As a model builds it (with its vocabulary), run on a batch; a parser that embeds token
    ids of its own gets them, as `spinn_classifier` and `spinn_nli` pass them."""
    vocab = Vocabulary({"tokens": {word: 1 for word in "a lovely film".split()}})
    encoder = Seq2VecEncoder.from_params(Params(block), vocab=vocab)
    inputs, mask = encoder_batch(block["input_dim"])
    tokens = torch.randint(2, vocab.get_vocab_size("tokens"), mask.shape) * mask
    output = encoder.encode(inputs, mask, parser_tokens=tokens).sentence
    assert output.shape == (3, block["hidden_dim"]) and torch.isfinite(output).all()


def build_model(block: Dict[str, Any]) -> None:
    vocab = Vocabulary(
        {"tokens": {"a": 1, "lovely": 1, "film": 1}, "labels": {"pos": 1, "neg": 1}},
        non_padded_namespaces=["labels"],
    )
    model = Model.from_params(vocab=vocab, params=Params(block))
    tokens = torch.tensor([[2, 3, 4], [3, 4, 0]])
    output = model({"tokens": {"tokens": tokens}}, label=torch.tensor([0, 1]))
    assert output["logits"].shape == (2, 2) and torch.isfinite(output["loss"])


def build_reader(block: Dict[str, Any], tmp_path: Path) -> None:
    reader = DatasetReader.from_params(Params(block))
    path = tmp_path / "lines.jsonl"
    path.write_text(
        (FIXTURES_ROOT / "classification" / "sst_binary_sample.jsonl").read_text(), "utf-8"
    )
    instances = list(reader.read(str(path)))
    assert instances and all(len(instance["tokens"]) for instance in instances)


def data_lines(text: str, tmp_path: Path) -> None:
    """JSON lines for `text_classification_transitions` (docs/your_own_model.md): read with
    it, the parse kept where given."""
    path = tmp_path / "lines.jsonl"
    path.write_text(text, encoding="utf-8")
    reader = DatasetReader.from_params(Params({"type": "text_classification_transitions"}))
    instances = list(reader.read(str(path)))
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert len(instances) == len(lines)
    for instance, line in zip(instances, lines):
        words = [token.text for token in instance["tokens"]]
        assert (
            words
            == line.get("binary_parse", line["text"]).replace("(", " ").replace(")", " ").split()
            or "binary_parse" not in line
        )


def readme_prediction(block: Dict[str, Any]) -> None:
    """The README's predictions.jsonl line has exactly the keys `spinn_nli` writes (its values
    are one run's; tests/test_cli_configs.py runs the smoke run that writes such a line)."""
    from allennlp.predictors import Predictor

    archive = FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz"
    predictor = Predictor.from_path(str(archive), "spinn_nli")
    output = predictor.predict_json(
        {"premise": "Two dogs are running through a field.", "hypothesis": "Animals are moving."}
    )
    assert set(block) == set(output), set(block) ^ set(output)


# What `allennlp train` reads of a "distributed" block (allennlp/commands/train.py, 2.10.1).
DISTRIBUTED_KEYS = {"cuda_devices", "num_nodes", "primary_addr", "primary_port", "ddp_accelerator"}


def distributed(block: Dict[str, Any]) -> None:
    assert set(block) <= DISTRIBUTED_KEYS and all(isinstance(d, int) for d in block["cuda_devices"])


def fine_tuning_config(block_text: str, tmp_path: Path) -> None:
    """The fine-tuning config (docs/your_own_model.md) evaluates beside the repository's
    training_config/ to the shipped config with the model read from an archive (its training
    and prediction run in tests/test_cli_configs.py)."""
    (tmp_path / "training_config").symlink_to(PROJECT_ROOT / "training_config")
    config_file = tmp_path / "finetune.jsonnet"
    config_file.write_text(block_text, encoding="utf-8")
    config = json.loads(_jsonnet.evaluate_file(str(config_file)))
    assert config["model"] == {"type": "from_archive", "archive_file": "out/smoke/model.tar.gz"}
    shipped = json.loads(
        _jsonnet.evaluate_file(str(PROJECT_ROOT / "training_config" / "spinn.jsonnet"))
    )
    assert {key: value for key, value in config.items() if key != "model"} == {
        key: value for key, value in shipped.items() if key != "model"
    }


def handler(text: str) -> Callable[[Path], None]:
    """What builds a block, by what it is."""
    if "import " in text and "from_archive" in text:
        return lambda tmp_path: fine_tuning_config(text, tmp_path)
    lines = [line for line in text.splitlines() if line.strip()]
    if all(line.startswith("{") and line.endswith("}") for line in lines) and len(lines) > 1:
        return lambda tmp_path: data_lines(text, tmp_path)
    block = evaluated(text)
    if {"logits", "probs", "premise_tree"} <= set(block):
        return lambda tmp_path: readme_prediction(block)
    (key,) = block
    value = block[key]
    if key in ("seq2vec_encoder", "encoder") and value.get("type") == "spinn":
        return lambda tmp_path: build_encoder(value)
    if key == "model":
        return lambda tmp_path: build_model(value)
    if key == "dataset_reader":
        return lambda tmp_path: build_reader(value, tmp_path)
    if key == "distributed":
        return lambda tmp_path: distributed(value)
    raise AssertionError(f"no handler for a block with key {key!r}: add one")


def test_the_documents_have_json_and_python_examples():
    assert len(JSON_BLOCKS) >= 8 and len(PYTHON_BLOCKS) >= 4


@pytest.mark.parametrize("where, text", JSON_BLOCKS, ids=[where for where, _ in JSON_BLOCKS])
def test_every_json_block_is_built(where, text, tmp_path):
    handler(text)(tmp_path)


@pytest.mark.parametrize("where, text", PYTHON_BLOCKS, ids=[where for where, _ in PYTHON_BLOCKS])
def test_every_python_block_runs_as_written(where, text, tmp_path):
    """In a fresh interpreter, outside the repository: what a reader who copies it gets.
    Whatever it prints is shown in the failure."""
    run_python(text, cwd=tmp_path)
