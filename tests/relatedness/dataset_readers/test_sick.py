"""The SICK reader on real rows (fixtures copied verbatim from SICK.txt, CRLF line ends and
header included) and on deliberately broken copies of them."""

import gzip
import logging
from typing import List, Sequence

import pytest
from allennlp.common.checks import ConfigurationError

from spinn_allennlp.data.tree_sources import BalancedTrees, TreeSource
from spinn_allennlp.relatedness.dataset_readers import SickReader
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import REDUCE, SHIFT, is_valid

SAMPLE = FIXTURES_ROOT / "relatedness" / "sick" / "sick_sample.txt"
MALFORMED = FIXTURES_ROOT / "relatedness" / "sick" / "malformed.txt"
LOGGER = "spinn_allennlp.data.dataset_readers.tree_dataset_reader"


class CountingTrees(TreeSource):
    """Right-branching trees, counting how it is called."""

    def __init__(self) -> None:
        self.batches: List[int] = []

    def transitions_batch(self, sentences: Sequence[Sequence[str]]) -> List[List[int]]:
        self.batches.append(len(sentences))
        return [[SHIFT] * len(s) + [REDUCE] * (len(s) - 1) for s in sentences]


def test_splits_and_relatedness():
    reader = SickReader()
    for split in ("TRAIN", "TRIAL", "TEST"):
        instances = list(reader.read(f"{SAMPLE}#{split}"))
        assert len(instances) == 10
        assert {i["metadata"]["split"] for i in instances} == {split}
    assert len(list(reader.read(SAMPLE))) == 30
    first = next(iter(reader.read(f"{SAMPLE}#TRAIN")))
    assert [t.text for t in first["premise"].tokens][:4] == ["A", "group", "of", "kids"]
    assert float(first["relatedness"].tensor) == 4.5
    assert first["metadata"]["pair_id"] == "1"
    for side in ("premise", "hypothesis"):
        transitions = first[f"{side}_transitions"].tensor.tolist()
        assert transitions == BalancedTrees().transitions(first["metadata"][f"{side}_tokens"])
        assert is_valid(transitions, len(first[side].tokens))
    with pytest.raises(ValueError, match="split"):
        list(reader.read(f"{SAMPLE}#DEV"))


def test_gzipped_file_reads_the_same(tmp_path):
    # The configs read the bundled data/sick/SICK.txt.gz: trees are prefetched from it too.
    gzipped = tmp_path / "sick_sample.txt.gz"
    gzipped.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    source = CountingTrees()
    plain = [i["metadata"]["pair_id"] for i in SickReader().read(f"{SAMPLE}#TEST")]
    read = list(SickReader(tree_source=source).read(f"{gzipped}#TEST"))
    assert [i["metadata"]["pair_id"] for i in read] == plain and len(read) == 10
    assert sum(source.batches) > 0  # the trees came from the prefetch over the gzipped file


def test_entailment_target_and_lowercase():
    reader = SickReader(target="entailment", lowercase=True)
    labels = [i["label"].label for i in reader.read(SAMPLE)]
    assert set(labels) <= {"entailment", "neutral", "contradiction"} and len(labels) == 30
    first = next(iter(reader.read(SAMPLE)))
    assert first["metadata"]["premise_tokens"][0] == "a"
    assert "relatedness" not in first.fields


def test_trees_come_from_the_source_in_batches_once_per_sentence():
    source = CountingTrees()
    reader = SickReader(tree_source=source)
    instances = list(reader.read(f"{SAMPLE}#TRAIN"))
    assert len(source.batches) == 1  # one batch for the whole split
    sentences = {
        tuple(instance["metadata"][f"{side}_tokens"])
        for instance in instances
        for side in ("premise", "hypothesis")
    }
    assert source.batches == [len(sentences)]
    list(reader.read(f"{SAMPLE}#TRAIN"))
    assert len(source.batches) == 1  # kept for later reads
    tokens = instances[0]["metadata"]["premise_tokens"]
    assert instances[0]["premise_transitions"].tensor.tolist() == (
        [SHIFT] * len(tokens) + [REDUCE] * (len(tokens) - 1)
    )


def test_dependencies():
    instance = next(iter(SickReader(dependencies=True).read(f"{SAMPLE}#TRAIN")))
    for side in ("premise", "hypothesis"):
        heads = instance[f"{side}_heads"].tensor.tolist()
        assert len(heads) == len(instance[side].tokens) and heads.count(-1) == 1


def test_a_source_giving_no_tree_is_a_counted_skip(caplog):
    class Broken(TreeSource):
        def transitions(self, tokens):
            return [SHIFT] * len(tokens)

    reader = SickReader(tree_source=Broken())
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        # No row left: an error that says why (not an empty dataset).
        with pytest.raises(ConfigurationError, match="read 0 instances"):
            list(reader.read(f"{SAMPLE}#TRIAL"))
    assert reader.skipped == {"invalid tree from the tree source": 10}


def test_malformed_rows_are_counted_with_file_and_line(caplog):
    reader = SickReader()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        instances = list(reader.read(MALFORMED))
    assert len(instances) == 3  # rows 2, 6 (its entailment label is not read) and 10
    assert reader.skipped == {
        "missing columns": 1,
        "bad relatedness score": 2,
        "empty sentence": 1,
        "unknown split": 1,
    }
    for line in (3, 4, 5, 7, 8):
        assert f"malformed.txt:{line}: skipped" in caplog.text
    # The row with an unknown entailment label is fine for relatedness, not for entailment.
    entailment = SickReader(target="entailment")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        list(entailment.read(MALFORMED))
    assert entailment.skipped["unknown label"] == 1
    assert "sentence_A is empty" in caplog.text


def test_raw_pairs():
    instance = SickReader().text_to_instance("Two dogs run.", "Animals move.", 3.5)
    assert [t.text for t in instance["premise"].tokens] == ["Two", "dogs", "run", "."]
    assert float(instance["relatedness"].tensor) == 3.5
    with pytest.raises(ValueError, match="empty sentence"):
        SickReader().text_to_instance(" ", "Animals move.")
    with pytest.raises(ValueError, match="target"):
        SickReader(target="similarity")
