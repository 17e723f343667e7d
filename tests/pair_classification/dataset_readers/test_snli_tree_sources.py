"""The SNLI reader with a tree source: raw pairs get the source's trees, parsed lines keep
theirs, a sentence without a tree skips its line (counted, logged)."""

import json
import logging
from collections import Counter

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader

from spinn_allennlp.data.tree_sources import GoldTrees, TreeSource
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import (
    balanced_transitions,
    is_valid,
    left_branching_transitions,
    right_branching_transitions,
)
from tools.testing.benepar import tiny_benepar
from tools.testing.configs import SNLI_SAMPLE

RAW_PAIRS = FIXTURES_ROOT / "pair_classification" / "snli" / "raw_pairs.jsonl"
LOGGER = "spinn_allennlp.data.dataset_readers.tree_dataset_reader"


def read(reader, path):
    return list(reader.read(str(path)))


def words(instance, side):
    return [token.text for token in instance[side].tokens]


def given(instance, side):
    return instance[f"{side}_transitions"].tensor.tolist()


@pytest.mark.parametrize(
    "source, transitions_of",
    [
        ("balanced", balanced_transitions),
        ("left_branching", left_branching_transitions),
        ("right_branching", right_branching_transitions),
    ],
)
def test_raw_pairs_get_the_sources_trees(source, transitions_of):
    reader = DatasetReader.from_params(
        Params({"type": "snli_transitions", "tree_source": {"type": source}})
    )
    instances = read(reader, RAW_PAIRS)
    assert len(instances) == 4 and reader.skipped == Counter()
    for instance in instances:
        assert instance["metadata"]["transitions_source"] == source
        for side in ("premise", "hypothesis"):
            assert given(instance, side) == transitions_of(len(words(instance, side)))


def test_raw_pairs_get_benepar_trees():
    model = str(tiny_benepar()[1])
    reader = DatasetReader.from_params(
        Params({"type": "snli_transitions", "tree_source": {"type": "benepar", "model": model}})
    )
    instances = read(reader, RAW_PAIRS)
    assert len(instances) == 4
    source = reader.tree_source
    for instance in instances:
        assert instance["metadata"]["transitions_source"] == "benepar"
        for side in ("premise", "hypothesis"):
            tokens = words(instance, side)
            assert is_valid(given(instance, side), len(tokens))
            assert given(instance, side) == source.transitions(tokens)


def test_parsed_lines_keep_their_gold_trees():
    plain = read(SnliTransitionsReader(), SNLI_SAMPLE)
    with_source = read(
        SnliTransitionsReader(tree_source=TreeSource.by_name("left_branching")()), SNLI_SAMPLE
    )
    assert len(with_source) == len(plain) > 0
    for ours, gold in zip(with_source, plain):
        assert ours["metadata"]["transitions_source"] == "gold"
        assert torch.equal(ours["premise_transitions"].tensor, gold["premise_transitions"].tensor)


def test_gold_source_skips_raw_lines_unless_the_sentence_is_known(tmp_path, caplog):
    """With "gold", a raw line has no tree: skipped and counted. A raw copy of SNLI lines gets
    the corpus's trees back from the gold parse files."""
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        with pytest.raises(ConfigurationError, match="read 0 instances"):
            read(SnliTransitionsReader(tree_source=GoldTrees()), RAW_PAIRS)
    assert "raw_pairs.jsonl:1: skipped: no tree from the tree source: no gold tree" in caplog.text

    lines = [json.loads(line) for line in SNLI_SAMPLE.read_text().splitlines()[:8]]
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        "".join(
            json.dumps(
                {"premise": x["sentence1"], "hypothesis": x["sentence2"], "pairID": x["pairID"]}
            )
            + "\n"
            for x in lines
        )
    )
    reader = SnliTransitionsReader(tree_source=GoldTrees([str(SNLI_SAMPLE)]))
    instances = read(reader, raw)
    gold = {i["metadata"]["pairID"]: i for i in read(SnliTransitionsReader(), SNLI_SAMPLE)}
    # Lines whose raw text the tokenizer splits as the corpus did get the corpus's trees back;
    # the others are skipped, counted.
    assert len(instances) >= 4
    assert reader.skipped == Counter({"no tree from the tree source": len(lines) - len(instances)})
    for instance in instances:
        corpus = gold[instance["metadata"]["pairID"]]
        assert instance["metadata"]["transitions_source"] == "gold"
        for side in ("premise", "hypothesis"):
            assert words(instance, side) == words(corpus, side)
            assert given(instance, side) == given(corpus, side)


def test_a_sentence_the_parser_cant_take_skips_only_its_line(tmp_path, caplog):
    model = str(tiny_benepar()[1])
    long_line = {"premise": " ".join(["dog"] * 300), "hypothesis": "Dogs."}
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        RAW_PAIRS.read_text().splitlines()[0]
        + "\n"
        + json.dumps(long_line)
        + "\n"
        + RAW_PAIRS.read_text().splitlines()[1]
        + "\n"
    )
    reader = SnliTransitionsReader(
        tree_source=TreeSource.from_params(Params({"type": "benepar", "model": model}))
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        instances = read(reader, path)
    assert len(instances) == 2
    assert reader.skipped == Counter({"no tree from the tree source": 1})
    assert "pairs.jsonl:2: skipped: no tree from the tree source: sentence of 300 words" in (
        caplog.text
    )
