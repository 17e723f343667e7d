"""scripts/run_experiments.py's bookkeeping, without training: a finished run (metrics.json in
its folder) is not trained again, a config without a test path is reported as untested, and a
job that raises is reported while the others go on."""

import importlib.util
import json
from pathlib import Path

from allennlp.common import Params
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

import spinn_allennlp.plugin  # noqa: F401  (registers the "spinn" encoder)
from spinn_allennlp.testing import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "scripts" / "run_experiments.py"
SNLI = "training_config/pair_classification/spinn_pi_nt.jsonnet"


def load_script():
    spec = importlib.util.spec_from_file_location("run_experiments", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def finished_run(runs: Path, name: str) -> None:
    (runs / name).mkdir(parents=True)
    (runs / name / "metrics.json").write_text("{}")


def test_read_jobs_skips_comments_and_reads_overrides(tmp_path):
    jobs = tmp_path / "jobs.tsv"
    jobs.write_text(f'# a comment\n\na\t{SNLI}\t{{"random_seed": 2}}\nb\t{SNLI}\n')
    assert load_script().read_jobs(jobs) == [("a", SNLI, {"random_seed": 2}), ("b", SNLI, {})]


def test_a_config_without_test_path_is_reported_untested(tmp_path, monkeypatch):
    monkeypatch.chdir(PROJECT_ROOT)
    script = load_script()
    finished_run(tmp_path, "a")
    message = script.run_job(("a", SNLI, {}), tmp_path, 1, True, None)
    assert message == "a: trained; not tested: no test_data_path (give --test-data)"
    assert not (tmp_path / "a" / "test_metrics.json").exists()


def test_a_failing_job_is_reported_and_the_others_go_on(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(PROJECT_ROOT)
    script = load_script()
    finished_run(tmp_path, "broken")
    finished_run(tmp_path, "fine")
    jobs = tmp_path / "jobs.tsv"
    jobs.write_text(f"broken\tno/such/config.jsonnet\t{{}}\nfine\t{SNLI}\t{json.dumps({})}\n")
    monkeypatch.setattr(
        "sys.argv", ["run_experiments.py", str(jobs), str(tmp_path), "--parallel", "1"]
    )
    script.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("broken: failed: ")
    assert lines[1] == "fine: trained; not tested: no test_data_path (give --test-data)"


def test_committed_job_lists_name_configs_that_build_with_their_overrides():
    """scripts/jobs/*.tsv (runs prepared for later, e.g. bf16 against float32): every config
    exists and its encoder builds with the job's overrides (a mistyped key or value fails
    here, not hours into a queue)."""
    lists = sorted((PROJECT_ROOT / "scripts" / "jobs").glob("*.tsv"))
    assert lists
    for path in lists:
        for name, config, overrides in load_script().read_jobs(path):
            params = Params.from_file(
                str(PROJECT_ROOT / config), params_overrides=json.dumps(overrides)
            )
            encoder = Seq2VecEncoder.from_params(params["model"]["encoder"])
            expected = overrides.get("model.encoder.mixed_precision")
            assert encoder.mixed_precision == expected, name
