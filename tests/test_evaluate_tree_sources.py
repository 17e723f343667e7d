"""scripts/evaluate_tree_sources.py's out-of-domain table on fixtures: a tiny benepar model and
the baselines on SNLI lines and real SST trees, scored as the SNLI table scores (the trees'
SHIFT/REDUCE steps against SST's own binary trees)."""

import json

import torch

from spinn_allennlp.data.labeled_trees import binary_tree_steps, parse_labeled_tree
from spinn_allennlp.testing import FIXTURES_ROOT, load_script
from spinn_core.transitions import balanced_transitions
from tools.parse_quality import ParseQuality
from tools.testing.benepar import tiny_benepar

SNLI = FIXTURES_ROOT / "trees" / "snli_parses_sample.jsonl"
SST = FIXTURES_ROOT / "classification" / "sst" / "sst_sample.txt"


def test_out_of_domain_table(tmp_path):
    _, model = tiny_benepar()
    script = load_script("scripts/evaluate_tree_sources.py")
    threads = torch.get_num_threads()
    try:
        script.main(
            ["--out-of-domain", "--data", str(SNLI), "--sst-data", str(SST), "--out", str(tmp_path)]
            + ["--benepar-models", str(model), "--threads", "1"]
        )
    finally:
        torch.set_num_threads(threads)
    result = json.loads((tmp_path / "out_of_domain.json").read_text())
    assert result["sentences"] == {"snli_test": 60, "sst_dev": 28}
    assert list(result["sources"]) == ["tiny", "balanced", "left_branching", "right_branching"]
    for row in result["sources"].values():
        assert row["snli_test"]["sentences"] == 60 and row["sst_dev"]["sentences"] == 28
        assert row["sst_dev"]["valid_tree_rate"] == 1.0
    # The balanced row, recomputed here from SST's own binary trees.
    quality = ParseQuality()
    for line in SST.read_text().splitlines():
        tokens, gold, _ = binary_tree_steps(parse_labeled_tree(line))
        quality.add(gold, balanced_transitions(len(tokens)))
    assert result["sources"]["balanced"]["sst_dev"]["bracket_f1"] == quality.as_dict()["bracket_f1"]
    table = (tmp_path / "out_of_domain.md").read_text().splitlines()
    assert table[0].startswith("| tree source | SNLI test: bracket F1 |") and len(table) == 6
    assert table[3].startswith("| balanced | ")
    assert f"{100 * quality.as_dict()['bracket_f1']:.1f}" in table[3]
