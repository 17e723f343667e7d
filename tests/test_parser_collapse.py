"""scripts/parser_collapse.py on a small REINFORCE run over the real ListOps sample lines."""

import json
import math

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.util import sanitize
from allennlp.models.archival import load_archive

from spinn_allennlp.testing import load_script
from spinn_core import transitions as tr
from spinn_core.tree_scores import bracket_f1
from tools.testing.configs import (
    LISTOPS_SAMPLE,
    as_json,
    listops_config,
    listops_small_overrides,
)

PARSER_COLLAPSE = load_script("scripts/parser_collapse.py")
WITH_TREES = load_script("scripts/listops_with_trees.py")
DATA = ["--data", str(LISTOPS_SAMPLE), "--lines", "24", "--max-tokens", "100"]


def test_inspect_and_reward(tmp_path):
    run = tmp_path / "run"
    overrides = listops_small_overrides("spinn_reinforce", **{"trainer.num_epochs": 2})
    train_model_from_file(listops_config("spinn_reinforce"), run, overrides=as_json(overrides))

    PARSER_COLLAPSE.main(
        [
            "inspect",
            str(run),
            str(run / "model_state_e2_b0.th"),
            *DATA,
            "--json",
            str(tmp_path / "i.json"),
        ]
    )
    rows = json.loads((tmp_path / "i.json").read_text())
    assert [row["model"] for row in rows] == [
        "fresh initialisation",
        "model_state_e2_b0.th",
        "  its parser reset",
        "  fresh, its parser",
    ]
    for row in rows:
        assert row["free steps"] > 0
        assert 0 <= row["entropy"] <= math.log(2) + 1e-6
        for share in ("p(drawn) > 0.99", "right-branching", "left-branching"):
            assert 0 <= row[share] <= 1
    # An untrained parser's logits are small: its moves are near-uniform (0.667 here).
    assert rows[0]["entropy"] > 0.5

    # The sample lines with the trained parser's greedy trees as their brackets (`--trees`).
    archive = load_archive(run / "model.tar.gz")
    outputs = archive.model.forward_on_instances(
        list(archive.validation_dataset_reader.read(LISTOPS_SAMPLE))
    )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(sanitize(o)) + "\n" for o in outputs))
    trees = tmp_path / "sample_with_trees.tsv"
    WITH_TREES.main([str(LISTOPS_SAMPLE), str(predictions), str(trees)])
    PARSER_COLLAPSE.main(
        ["reward", str(run), *DATA, "--train", str(LISTOPS_SAMPLE), "--batches", "6"]
        + ["--batch-size", "8", "--json", str(tmp_path / "r.json"), "--trees", str(trees)]
    )
    rows = json.loads((tmp_path / "r.json").read_text())
    assert [row["batches"] for row in rows] == [0, 6]
    # Untrained: every tree's loss is about ln 10 (10 labels, near-uniform output).
    for shape in ("gold", "balanced", "left", "right", "drawn", "their trees"):
        assert abs(rows[0][shape] - math.log(10)) < 0.1, shape
    # A 2-epoch parser's trees are not gold on most lines; gold is preferred on some share.
    for row in rows:
        assert 0 < row["their trees not gold"] <= 1
        assert 0 <= row["gold preferred"] <= 1
    # Trees of other lines are refused.
    other = tmp_path / "other.tsv"
    other.write_text("".join(reversed(trees.read_text().splitlines(keepends=True))))
    with pytest.raises(ValueError, match="not the dev lines"):
        PARSER_COLLAPSE.main(
            ["reward", str(run), *DATA, "--train", str(LISTOPS_SAMPLE), "--batches", "1"]
            + ["--batch-size", "8", "--trees", str(other)]
        )
    assert all(math.isfinite(row["push (greedy baseline)"]) for row in rows)
    for row in rows:
        for name in ("drawn F1", "lowest-loss draw F1", "highest-loss draw F1"):
            assert 0 <= row[name] <= 100, name


def test_inspect_and_reward_with_a_parser_of_its_own(tmp_path):
    """A parser with a network of its own reads the token ids (passed through) and keeps its
    REDUCE / SHIFT bias in its own tracker, which `reward` differentiates."""
    run = tmp_path / "run"
    overrides = listops_small_overrides("own_parser_best_draw", **{"trainer.num_epochs": 1})
    train_model_from_file(listops_config("own_parser_best_draw"), run, overrides=as_json(overrides))
    PARSER_COLLAPSE.main(
        ["inspect", str(run), str(run / "model_state_e1_b0.th"), *DATA]
        + ["--json", str(tmp_path / "i.json")]
    )
    rows = json.loads((tmp_path / "i.json").read_text())
    assert len(rows) == 4
    for row in rows:
        for share in ("greedy right-branching", "greedy left-branching"):
            assert 0 <= row[share] <= 1
    fresh = rows[0]
    # A fresh parser's tracker states vary little from step to step, so its REDUCE - SHIFT
    # gap is nearly the same everywhere (here its mean is about 80 of its standard deviations
    # from 0) and its greedy move the same one at every free step: its greedy tree is one of
    # the two trivial trees.
    assert abs(fresh["gap mean"]) > 3 * fresh["gap sd"]
    assert fresh["greedy right-branching"] + fresh["greedy left-branching"] == 1.0
    PARSER_COLLAPSE.main(
        ["reward", str(run), *DATA, "--train", str(LISTOPS_SAMPLE), "--batches", "2"]
        + ["--batch-size", "8", "--json", str(tmp_path / "r.json")]
    )
    rows = json.loads((tmp_path / "r.json").read_text())
    assert all(math.isfinite(row["push (greedy baseline)"]) for row in rows)
    assert any(row["push (greedy baseline)"] != 0.0 for row in rows)

    PARSER_COLLAPSE.main(
        ["positions", str(run), "--train", str(LISTOPS_SAMPLE), "--max-tokens", "100"]
        + ["--json", str(tmp_path / "p.json")]
    )
    row = json.loads((tmp_path / "p.json").read_text())
    assert row["lines"] > 0
    # Every ListOps line ends with the closing bracket: its last token tells nothing.
    assert row["I(label; token -1)"] == 0.0
    for index in (0, 1, 2, -3, -2):
        assert 0.0 <= row[f"I(label; token {index})"] <= row["H(label)"] + 1e-9


def test_best_of_draws_scores_the_lowest_and_highest_loss_draws():
    gold = [0, 0, 1, 0, 1, 0, 1]  # ((w0 w1) w2) w3: left-branching over four words
    right = tr.right_branching_transitions(4)
    balanced = tr.balanced_transitions(4)
    draws = [torch.tensor([gold, right]), torch.tensor([right, balanced])]
    # (K, B): line 0 draws gold (0.5) and right (1.0), line 1 right (2.0) and balanced (1.0).
    losses = torch.tensor([[0.5, 2.0], [1.0, 1.0]])
    scores = PARSER_COLLAPSE.best_of_draws(losses, draws, torch.tensor([gold, gold]))
    f1_right, f1_balanced = bracket_f1(right, gold), bracket_f1(balanced, gold)
    assert scores["lowest-loss draw F1"] == 100 * (1.0 + f1_balanced) / 2
    assert scores["highest-loss draw F1"] == 100 * (f1_right + f1_right) / 2
    assert scores["drawn F1"] == 100 * ((1.0 + f1_right) / 2 + (f1_right + f1_balanced) / 2) / 2
