"""benchmarks/listops_epoch_speed.py end to end on the ListOps fixture lines (one batch, three
policies and the LSTM both ways): the table and its JSON are written, with a time for each
config; PPO's step includes its further parser updates (the config's callback runs)."""

import json
import runpy
import sys

from spinn_allennlp.modules.policy_gradient import ParserUpdate
from spinn_allennlp.testing import PROJECT_ROOT
from tools.testing.configs import LISTOPS_SAMPLE


def test_the_benchmark_times_each_policy(tmp_path, monkeypatch):
    monkeypatch.chdir(PROJECT_ROOT)
    configs = "spinn_pi_nt,spinn_gumbel,spinn_ppo,lstm,lstm:packed"
    argv = ["listops_epoch_speed.py", "--configs", configs]
    argv += ["--batches", "1"]
    argv += ["--threads", "1", "--train-data", str(LISTOPS_SAMPLE), "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    further_updates = []
    surrogate = ParserUpdate.loss

    def counted(update):
        further_updates.append(update)
        return surrogate(update)

    monkeypatch.setattr(ParserUpdate, "loss", counted)
    runpy.run_path(str(PROJECT_ROOT / "benchmarks" / "listops_epoch_speed.py"), run_name="__main__")
    data = json.loads((tmp_path / "listops_epoch_cpu.json").read_text())
    assert set(data["results"]) == {
        "spinn_pi_nt",
        "spinn_gumbel",
        "spinn_ppo",
        "lstm",
        "lstm:packed",
    }
    # PPO's three further updates ran after each of its two steps (one untimed, one timed).
    assert len(further_updates) == 2 * 3
    for result in data["results"].values():
        assert len(result["step_seconds"]) == 1 and result["epoch_seconds"] > 0
    table = (tmp_path / "listops_epoch_cpu.md").read_text()
    assert "straight-through Gumbel" in table and "÷ spinn_pi_nt" in table
    assert "`listops_lstm:packed`" in table
