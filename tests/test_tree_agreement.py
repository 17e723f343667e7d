"""scripts/tree_agreement.py: induced trees against gold, trivial trees and each other."""

import json

import pytest

from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT, load_script
from spinn_core.transitions import (
    parse_to_transitions,
    right_branching_transitions,
    transitions_to_string,
)

SNLI = FIXTURES_ROOT / "pair_classification" / "snli" / "snli_sample.jsonl"
GOLD_KEYS = "sentence1_binary_parse,sentence2_binary_parse"
KEYS = "premise_tree,hypothesis_tree"
TREE_AGREEMENT = load_script("scripts/tree_agreement.py")


def on_snli(runs, out):
    """``tree_agreement.py`` on the SNLI sample: ``runs`` are its NAME=FILE arguments."""
    snli = ["--gold", str(SNLI), "--gold-keys", GOLD_KEYS, "--keys", KEYS, "--out", str(out)]
    return TREE_AGREEMENT.main([*runs, *snli])


def snli_predictions(path, tree_of):
    """A predictions file as `allennlp predict` writes it for spinn_nli, each tree replaced by
    ``tree_of(gold binary parse)``."""
    lines = []
    for line in SNLI.read_text().splitlines():
        example = json.loads(line)
        lines.append(
            json.dumps(
                {
                    "label": "neutral",
                    "premise_tree": tree_of(example["sentence1_binary_parse"]),
                    "hypothesis_tree": tree_of(example["sentence2_binary_parse"]),
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def right_branching(tree):
    words, _ = parse_to_transitions(tree)
    return transitions_to_string(words, right_branching_transitions(len(words)))


def test_gold_scores_100_and_trivial_trees_match_their_baseline(tmp_path):
    gold = snli_predictions(tmp_path / "gold.jsonl", lambda tree: tree)
    right = snli_predictions(tmp_path / "right.jsonl", right_branching)
    report = on_snli(
        [f"copy/1={gold}", f"copy/2={right}", f"right={right}"], tmp_path / "out" / "agreement"
    )
    scores = report["against_gold"]
    assert scores["copy/1"]["sentences"] == 60  # 30 pairs, premise and hypothesis pooled
    assert scores["copy/1"]["bracket_f1"] == 1.0 and scores["copy/1"]["exact_tree_rate"] == 1.0
    assert scores["right"] == scores["right-branching"]
    assert scores["right"]["right_branching_rate"] == 1.0
    assert scores["right"]["left_branching_rate"] == 0.0
    assert scores["left-branching"]["left_branching_rate"] == 1.0
    assert 0.0 < scores["right"]["bracket_f1"] < scores["copy/1"]["bracket_f1"]
    # A group of two runs: their agreement is one run's F1 against the other's trees; "right"
    # alone is no group.
    assert list(report["self_agreement"]) == ["copy"]
    copy = report["self_agreement"]["copy"]
    assert copy["runs"] == 2
    assert copy["mean_f1"] == pytest.approx(scores["right"]["bracket_f1"], abs=1e-12)
    assert (tmp_path / "out" / "agreement.json").exists()
    assert "| right-branching | 60 |" in (tmp_path / "out" / "agreement.md").read_text()


def test_agreement_on_a_hand_computed_case():
    """Brackets other than the whole sentence: {(0,2), (2,4)} against {(1,4), (2,4)}: one
    matched of two each, F1 = 2 * 1 / (2 + 2)."""
    a = parse_to_transitions("( ( a b ) ( c d ) )")[1]
    b = parse_to_transitions("( a ( b ( c d ) ) )")[1]
    result = TREE_AGREEMENT.agreement({"x/1": [a], "x/2": [b], "x/3": [a]})["x"]
    assert result["pairs"] == {"x/1 vs x/2": 0.5, "x/1 vs x/3": 1.0, "x/2 vs x/3": 0.5}
    assert result["mean_f1"] == pytest.approx(2 / 3)


def test_trivial_shares_count_trees_of_three_or_more_words():
    trees = ["( ( a b ) c )", "( a ( b c ) )", "( ( a b ) ( c d ) )", "( a b )"]
    shares = TREE_AGREEMENT.trivial_shares([parse_to_transitions(t)[1] for t in trees])
    assert shares == {"left_branching_rate": 1 / 3, "right_branching_rate": 1 / 3}


def test_real_predict_output_on_listops_lines(tmp_path):
    """`allennlp predict --use-dataset-reader` output of a shipped archive (a ListOps model
    with its own parser) against the ListOps lines it read: gold from the TSV."""
    listops = FIXTURES_ROOT / "classification" / "listops" / "sample.tsv"
    predictions = (
        PROJECT_ROOT / "fixtures/archives/v0.2.0/listops_spinn_summaries.predictions.jsonl"
    )
    report = TREE_AGREEMENT.main(
        [
            f"model={predictions}",
            "--gold",
            str(listops),
            "--keys",
            "tree",
            "--out",
            str(tmp_path / "listops"),
        ]
    )
    scores = report["against_gold"]
    assert {s["sentences"] for s in scores.values()} == {24}
    assert all(0.0 <= s["bracket_f1"] <= 1.0 for s in scores.values())
    # ListOps's gold trees fold each list to the left, so a right-branching tree shares none of
    # their brackets and a left-branching one shares many.
    assert scores["right-branching"]["bracket_f1"] == 0.0
    assert scores["left-branching"]["bracket_f1"] > 0.2


def test_predictions_of_other_inputs_are_refused(tmp_path):
    shuffled = snli_predictions(tmp_path / "p.jsonl", lambda tree: tree)
    lines = shuffled.read_text().splitlines()
    # The first two pairs share their premise: the hypotheses differ.
    shuffled.write_text("\n".join([lines[1], lines[0]] + lines[2:]) + "\n")
    with pytest.raises(ValueError, match=r"p.jsonl:1 hypothesis_tree: the tree's words"):
        on_snli([f"a={shuffled}"], tmp_path / "x")
    shuffled.write_text("\n".join(lines[:5]) + "\n")
    with pytest.raises(ValueError, match="5 predictions for 30 gold lines"):
        on_snli([f"a={shuffled}"], tmp_path / "x")
    whole = snli_predictions(tmp_path / "q.jsonl", lambda tree: tree)
    with pytest.raises(ValueError, match="q.jsonl:1: no 'tree'"):
        TREE_AGREEMENT.main(
            [f"a={whole}", "--gold", str(SNLI), "--gold-keys", "sentence1_binary_parse"]
            + ["--keys", "tree", "--out", str(tmp_path / "x")]
        )
