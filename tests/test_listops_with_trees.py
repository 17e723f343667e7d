"""scripts/listops_with_trees.py: the ListOps sample lines bracketed as a real archive's parser
parsed them (0.2.0's full SPINN with summaries; `allennlp predict` output kept in fixtures)."""

import json

import pytest

from spinn_allennlp.testing import FIXTURES_ROOT, load_script
from spinn_core.transitions import parse_to_transitions

SCRIPT = load_script("scripts/listops_with_trees.py")
SAMPLE = FIXTURES_ROOT / "classification" / "listops" / "sample.tsv"
PREDICTIONS = FIXTURES_ROOT / "archives" / "v0.2.0" / "listops_spinn_summaries.predictions.jsonl"


def test_each_line_keeps_its_label_and_takes_the_predicted_tree(tmp_path):
    out = tmp_path / "sample_with_trees.tsv"
    assert SCRIPT.main([str(SAMPLE), str(PREDICTIONS), str(out)]) == 24
    lines = out.read_text().splitlines()
    originals = SAMPLE.read_text().splitlines()
    predictions = [json.loads(line) for line in PREDICTIONS.read_text().splitlines()]
    differ = 0
    for line, original, prediction in zip(lines, originals, predictions):
        label, tree = line.split("\t")
        original_label, expression = original.split("\t")
        assert label == original_label
        words, transitions = parse_to_transitions(tree)
        assert words == parse_to_transitions(expression)[0]
        assert transitions == prediction["transitions"][: len(transitions)]
        differ += transitions != parse_to_transitions(expression)[1]
    assert differ == 24  # this parser's bracket F1 against gold is 0.0


def test_predictions_of_other_lines_are_refused(tmp_path):
    lines = SAMPLE.read_text().splitlines()
    predictions = PREDICTIONS.read_text().splitlines()
    with pytest.raises(ValueError, match="24 lines but 23 predictions"):
        SCRIPT.with_trees(lines, predictions[:23])
    with pytest.raises(ValueError, match="line 1: the predicted tree is not over"):
        SCRIPT.with_trees(lines[1:2] + lines[:1], predictions[:2])
