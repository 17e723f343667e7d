"""benchmarks/listops_epoch_speed.py end to end on the ListOps fixture lines (one batch, two
policies): the table and its JSON are written, with a time for each policy."""

import json
import runpy
import sys

from spinn_allennlp.testing import PROJECT_ROOT
from spinn_allennlp.testing.configs import LISTOPS_SAMPLE


def test_the_benchmark_times_each_policy(tmp_path, monkeypatch):
    monkeypatch.chdir(PROJECT_ROOT)
    argv = ["listops_epoch_speed.py", "--configs", "spinn_pi_nt,spinn_gumbel", "--batches", "1"]
    argv += ["--threads", "1", "--train-data", str(LISTOPS_SAMPLE), "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(PROJECT_ROOT / "benchmarks" / "listops_epoch_speed.py"), run_name="__main__")
    data = json.loads((tmp_path / "listops_epoch_cpu.json").read_text())
    assert set(data["results"]) == {"spinn_pi_nt", "spinn_gumbel"}
    for result in data["results"].values():
        assert len(result["step_seconds"]) == 1 and result["epoch_seconds"] > 0
    table = (tmp_path / "listops_epoch_cpu.md").read_text()
    assert "straight-through Gumbel" in table and "÷ spinn_pi_nt" in table
