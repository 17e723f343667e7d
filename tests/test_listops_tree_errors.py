"""scripts/listops_tree_errors.py: a ListOps parser's wrong brackets, lists split or regrouped."""

import json
import statistics

import pytest

from spinn_allennlp.testing import FIXTURES_ROOT, load_script
from spinn_core.transitions import (
    left_branching_transitions,
    parse_to_transitions,
    transitions_to_string,
)

ERRORS = load_script("scripts/listops_tree_errors.py")
SAMPLE = FIXTURES_ROOT / "classification" / "listops" / "sample.tsv"

GOLD = "( ( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 7 ) ] ) ) 0 ) ] )"  # [MAX 2 [MIN 4 7 ] 0 ] = 4
# [MIN's arguments joined before its operator: the list stays whole.
REGROUPED = "( ( ( ( [MAX 2 ) ( [MIN ( ( 4 7 ) ] ) ) ) 0 ) ] )"
# `7 ] 0` and `] 0` mix the inner list's end with the outer list's argument: the list is split.
SPLIT = "( ( ( [MAX 2 ) ( ( [MIN 4 ) ( 7 ( ] 0 ) ) ) ) ] )"


def transitions(tree):
    return parse_to_transitions(tree)[1]


def test_nested_lists_and_crossing_spans():
    words, _ = parse_to_transitions(GOLD)
    assert ERRORS.nested_lists(words) == {(2, 6)}  # [MIN 4 7 ]; the whole line is left out
    assert ERRORS.nested_lists(["[SM", "6", "5", "]"]) == set()
    assert ERRORS.crosses((1, 3), (2, 6)) and ERRORS.crosses((5, 7), (2, 6))
    assert not ERRORS.crosses((3, 5), (2, 6)) and not ERRORS.crosses((0, 7), (2, 6))
    assert not ERRORS.crosses((2, 6), (2, 6)) and not ERRORS.crosses((0, 2), (2, 6))
    with pytest.raises(ValueError, match="not closed"):
        ERRORS.nested_lists(["[MAX", "2"])
    with pytest.raises(ValueError, match="no list open"):
        ERRORS.nested_lists(["2", "]"])


def test_line_errors_tell_a_regrouped_list_from_a_split_one():
    words, gold = parse_to_transitions(GOLD)
    exact = ERRORS.line_errors(words, gold, gold)
    assert (exact.lists, exact.lists_whole, exact.wrong, exact.kind) == (1, 1, 0, "gold tree")
    assert (exact.whole, exact.operator_last) == (2, 0)

    regrouped = ERRORS.line_errors(words, gold, transitions(REGROUPED))
    # Predicted brackets (3,5) "4 7", (3,6) "4 7 ]", (2,6) the list, (0,6), (0,7); gold has
    # (0,2) (2,4) (2,5) (2,6) (0,6) (0,7): two wrong, both inside [MIN.
    assert (regrouped.lists, regrouped.lists_whole) == (1, 1)
    assert (regrouped.wrong, regrouped.wrong_regrouping) == (2, 2)
    assert regrouped.kind == "lists whole, grouped otherwise"
    # [MIN joins "4 7 ]" last; [MAX joins "2" first.
    assert (regrouped.whole, regrouped.operator_last) == (2, 1)

    split = ERRORS.line_errors(words, gold, transitions(SPLIT))
    # Predicted: (0,2) ok, (2,4) ok, (5,7) "] 0" and (4,7) "7 ] 0" cross [MIN, (2,7) holds
    # [MIN 4 7 ] 0 without crossing it: it regroups the outer list's arguments.
    assert (split.lists, split.lists_whole) == (1, 0)
    assert (split.wrong, split.wrong_regrouping) == (3, 1)
    assert split.kind == "a list split"
    assert (split.whole, split.operator_last) == (1, 0)


def write_predictions(path, rows):
    path.write_text(
        "".join(json.dumps({"label": label, "tree": tree}) + "\n" for label, tree in rows)
    )
    return path


def test_main_on_real_listops_lines(tmp_path):
    gold = ERRORS.read_gold(SAMPLE)
    nested = [i for i, (_, words, _) in enumerate(gold) if ERRORS.nested_lists(words)]
    assert 0 < len(nested) < len(gold)  # the sample has flat lines, which are left out
    # A run with every gold tree, right on every line but the first nested one; and the
    # left-branching trees with every label right.
    first = nested[0]
    exact = [
        (str((int(label) + 1) % 10) if i == first else label, transitions_to_string(words, t))
        for i, (label, words, t) in enumerate(gold)
    ]
    left = [
        (label, transitions_to_string(words, left_branching_transitions(len(words))))
        for label, words, _ in gold
    ]
    report = ERRORS.main(
        [
            f"exact={write_predictions(tmp_path / 'exact.jsonl', exact)}",
            f"left={write_predictions(tmp_path / 'left.jsonl', left)}",
            "--gold",
            str(SAMPLE),
            "--out",
            str(tmp_path / "out" / "errors"),
        ]
    )
    exact_entry, left_entry = report["trees"]["exact"], report["trees"]["left"]
    assert exact_entry["lines"] == len(nested) and exact_entry["lists_whole"] == 1.0
    assert exact_entry["wrong_brackets"] == 0 and exact_entry["wrong_regrouping"] is None
    gold_kind = exact_entry["kinds"]["gold tree"]
    assert gold_kind["share"] == 1.0
    assert gold_kind["accuracy"] == pytest.approx((len(nested) - 1) / len(nested))
    lengths = sorted(len(gold[i][1]) for i in nested)
    assert gold_kind["median_tokens"] == statistics.median(lengths)
    assert exact_entry["kinds"]["a list split"]["median_tokens"] is None
    # Left-branching brackets are prefixes of the line: no nested list is one of them.
    assert exact_entry["operator_last"] == 0.0
    # Right-branching trees keep only the outermost list whole, its operator joined last.
    assert report["trees"]["right-branching"]["operator_last"] == 1.0
    assert left_entry["lists_whole"] == 0.0 and left_entry["kinds"]["a list split"]["share"] == 1.0
    assert left_entry["kinds"]["a list split"]["accuracy"] == 1.0
    assert report["trees"]["left-branching"]["lists_whole"] == 0.0
    assert report["trees"]["left-branching"]["kinds"]["a list split"]["accuracy"] is None
    groups = report["by_median"]["exact"]
    assert groups["with a MED list"]["lines"] + groups["without"]["lines"] == len(nested)
    assert min(groups["with a MED list"]["lines"], groups["without"]["lines"]) > 0
    written = json.loads((tmp_path / "out" / "errors.json").read_text())
    assert written["trees"]["exact"] == exact_entry
    table = (tmp_path / "out" / "errors.md").read_text()
    assert "| exact |" in table and "| exact, with a MED list |" in table


def test_predictions_of_other_lines_are_refused(tmp_path):
    gold = ERRORS.read_gold(SAMPLE)
    shifted = [(label, transitions_to_string(words, t)) for label, words, t in gold[1:] + gold[:1]]
    path = write_predictions(tmp_path / "shifted.jsonl", shifted)
    with pytest.raises(ValueError, match="not the gold line's"):
        ERRORS.read_run(path, gold)
    with pytest.raises(ValueError, match="predictions for"):
        ERRORS.read_run(write_predictions(tmp_path / "short.jsonl", shifted[:3]), gold)
