"""scripts/evaluate_listops_given_trees.py: a ListOps model on its own trees, then on the gold
and the operator-last trees given, on a real archive (0.2.0's full SPINN with summaries, whose
two-epoch parser builds trees unlike gold) and the ListOps sample lines."""

import json

import pytest

from spinn_allennlp.testing import FIXTURES_ROOT, load_script
from spinn_core.transitions import parse_to_transitions

SCRIPT = load_script("scripts/evaluate_listops_given_trees.py")
ARCHIVE = FIXTURES_ROOT / "archives" / "v0.2.0" / "listops_spinn_summaries.tar.gz"
SAMPLE = FIXTURES_ROOT / "classification" / "listops" / "sample.tsv"


def test_the_trees_given_are_the_trees_followed(tmp_path):
    written = SCRIPT.main([str(tmp_path), str(ARCHIVE), "--data", str(SAMPLE)])
    names = [path.name for path in written]
    assert names == [f"listops_spinn_summaries_{t}.json" for t in ("own", "gold", "operator_last")]
    own, gold, operator_last = (json.loads(path.read_text()) for path in written)
    lines = len(SAMPLE.read_text().splitlines())
    assert own["lines"] == gold["lines"] == operator_last["lines"] == lines
    # Given, the model follows exactly the reader's trees; its own parser builds other trees
    # (its exact-tree rate against gold is the archive's recorded tree accuracy, 0.0).
    assert gold["same_tree_as_reader"] == operator_last["same_tree_as_reader"] == 1.0
    assert own["same_tree_as_reader"] == own["tree_accuracy"] == 0.0
    # Its own trees are whole trees; the recorded metrics of `allennlp evaluate` on this file.
    recorded = json.loads(ARCHIVE.with_name("listops_spinn_summaries.metrics.json").read_text())
    assert own["accuracy"] == recorded["accuracy"]
    assert own["bracket_f1"] == pytest.approx(recorded["bracket_f1"], abs=1e-12)
    # A file already written is kept: a second call computes nothing and leaves it as it was.
    times = (tmp_path / "times.txt").read_text()
    assert len(times.splitlines()) == 3
    SCRIPT.main([str(tmp_path), str(ARCHIVE), "--data", str(SAMPLE)])
    assert (tmp_path / "times.txt").read_text() == times


def test_operator_last_trees_join_each_operator_after_its_arguments():
    # What makes the third evaluation a different one: `[SM 6 5 9 0 ]` folded operator first
    # (gold) and operator last, as the script's override makes the archive's reader give it.
    line = SAMPLE.read_text().splitlines()[0].split("\t")[1]
    assert line == "( ( ( ( ( [SM 6 ) 5 ) 9 ) 0 ) ] )"
    reader = SCRIPT.load_archive(
        ARCHIVE, overrides=json.dumps(SCRIPT.OVERRIDES["operator_last"])
    ).validation_dataset_reader
    operator_last = reader.text_to_instance(line, "0")["transitions"].tensor.tolist()
    _, expected = parse_to_transitions("( [SM ( ( ( ( ( 6 5 ) 9 ) 0 ) ] ) ) )")
    assert operator_last == expected == [0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1]
    assert operator_last != parse_to_transitions(line)[1]
