"""scripts/experiments.py, the experiments command, without training: the runner's bookkeeping
(a finished run is not trained again, a config without a test path is reported as untested, a
job that raises is reported while the others go on), the job lists, `collect`, and `summarize`
regenerating every committed table, summary.json and results page byte for byte from the
committed run folders."""

import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

import spinn_allennlp.plugin  # noqa: F401  (registers the "spinn" encoder)
from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT, load_script

RESULTS = PROJECT_ROOT / "results"
SNLI = "training_config/pair_classification/spinn_pi_nt.jsonnet"


EXPERIMENTS = load_script("scripts/experiments.py")
# Loading the command put scripts/ on the path, where its parts are a package.
from experiment_pipeline.common import PAGE_TASKS, TASKS  # noqa: E402
from experiment_pipeline.jobs import read_jobs  # noqa: E402
from experiment_pipeline.packs import pack, unpack  # noqa: E402
from experiment_pipeline.pages import results_page, summarize, write_summary  # noqa: E402
from experiment_pipeline.run_folders import (  # noqa: E402
    collect,
    count_parameters,
    record_resumption,
    repoint_best_weights,
    trained_seconds,
    training_seconds,
)
from experiment_pipeline.running import max_parallel, run_job  # noqa: E402


def finished_run(runs: Path, name: str) -> None:
    (runs / name).mkdir(parents=True)
    (runs / name / "metrics.json").write_text("{}")


# run ----------------------------------------------------------------------------------------


def test_read_jobs_skips_comments_and_reads_overrides(tmp_path):
    jobs = tmp_path / "jobs.tsv"
    jobs.write_text(f'# a comment\n\na\t{SNLI}\t{{"random_seed": 2}}\nb\t{SNLI}\n')
    assert read_jobs(jobs) == [("a", SNLI, {"random_seed": 2}), ("b", SNLI, {})]


def test_a_config_without_test_path_is_reported_untested(tmp_path, monkeypatch):
    monkeypatch.chdir(PROJECT_ROOT)
    finished_run(tmp_path, "a")
    message = run_job(("a", SNLI, {}), tmp_path, 1, True, None)
    assert message == "a: trained; not tested: no test_data_path (give --test-data)"
    assert not (tmp_path / "a" / "test_metrics.json").exists()


def test_a_failing_job_is_reported_and_the_others_go_on(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(PROJECT_ROOT)
    finished_run(tmp_path, "broken")
    finished_run(tmp_path, "fine")
    jobs = tmp_path / "jobs.tsv"
    jobs.write_text(f"broken\tno/such/config.jsonnet\t{{}}\nfine\t{SNLI}\t{json.dumps({})}\n")
    EXPERIMENTS.main(["run", str(jobs), str(tmp_path), "--parallel", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("broken: failed: ")
    assert lines[1] == "fine: trained; not tested: no test_data_path (give --test-data)"


def test_no_more_jobs_at_once_than_the_cores_hold():
    assert max_parallel(8, 1, cores=2) == 2
    assert max_parallel(2, 2, cores=2) == 1
    assert max_parallel(4, 8, cores=2) == 1  # at least one
    assert max_parallel(1, 1, cores=16) == 1


def test_run_trains_and_tests_a_job_then_skips_it_when_run_again(tmp_path, monkeypatch, capsys):
    """One real job end to end (AllenNLP's basic_classifier with the spinn encoder, a few
    seconds of training): trained, evaluated on the test file, the machine's load recorded;
    a second `run` of the same list neither trains nor tests it again."""
    monkeypatch.chdir(PROJECT_ROOT)
    monkeypatch.setenv("FIXTURES", str(FIXTURES_ROOT))
    config = "fixtures/classification/basic_classifier_spinn.jsonnet"
    test_data = "fixtures/classification/sst_binary_sample.jsonl"
    jobs = tmp_path / "jobs.tsv"
    jobs.write_text(f'tiny_s1\t{config}\t{{"random_seed": 1}}\n')
    command = ["run", str(jobs), str(tmp_path / "runs"), "--threads", "1", "--test-data", test_data]
    EXPERIMENTS.main(command)
    assert capsys.readouterr().out.splitlines()[-1].startswith("tiny_s1: done in ")
    run = tmp_path / "runs" / "tiny_s1"
    assert 0 <= json.loads((run / "test_metrics.json").read_text())["accuracy"] <= 1
    machine = json.loads((run / "machine.json").read_text())
    assert machine["threads_per_job"] == 1 and machine["load_samples"] >= 1
    written = {
        name: (run / name).stat().st_mtime_ns for name in ("metrics.json", "test_metrics.json")
    }
    EXPERIMENTS.main(command)
    assert {name: (run / name).stat().st_mtime_ns for name in written} == written


# jobs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_every_default_job_names_a_shipped_config(task, capsys):
    EXPERIMENTS.main(["jobs", task])
    jobs = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert jobs
    for name, config, overrides in jobs:
        assert (PROJECT_ROOT / config).is_file(), (name, config)
        json.loads(overrides)


def test_job_names_are_what_summarize_groups_by(capsys):
    EXPERIMENTS.main(["jobs", "snli", "--models", "spinn", "--seeds", "config,2"])
    assert capsys.readouterr().out.splitlines() == [
        "spinn\ttraining_config/pair_classification/spinn.jsonnet\t{}",
        "spinn_seed2\ttraining_config/pair_classification/spinn.jsonnet\t"
        '{"random_seed": 2, "numpy_seed": 2, "pytorch_seed": 2}',
    ]
    extra = '{"dataset_reader.tree_source": {"type": "spinn", "archive": "a.tar.gz"}}'
    EXPERIMENTS.main(["jobs", "sick", "--encoders", "spinn_pi_nt", "--tree-sources", "spinn"]
                     + ["--seeds", "3", "--extra", extra])  # fmt: skip
    name, config, overrides = capsys.readouterr().out.strip().split("\t")
    assert (name, config) == (
        "spinn_pi_nt_spinn_s3",
        "training_config/relatedness/sick_spinn_pi_nt.jsonnet",
    )
    # --extra comes last: it replaces the tree source the job list sets.
    assert json.loads(overrides)["dataset_reader.tree_source"] == {
        "type": "spinn",
        "archive": "a.tar.gz",
    }
    EXPERIMENTS.main(["jobs", "sst", "--models", "lstm", "--seeds", "1"])
    names = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert names == ["fine_lstm_s1", "binary_lstm_s1"]


# summarize ----------------------------------------------------------------------------------

PAGES = sorted(path.parent.name for path in RESULTS.glob("*/about.md"))


def test_every_task_with_runs_has_a_results_page():
    assert PAGES == sorted(PAGE_TASKS)


@pytest.mark.parametrize("task", PAGES)
def test_summarize_regenerates_the_committed_files_byte_for_byte(task, tmp_path):
    """table.md and summary.json were written by the earlier summary scripts (the new command
    must give the same bytes from the committed run folders alone: no archive is committed),
    and README.md must be what about.md and the tables make (edit about.md, then summarize)."""
    write_summary(task, RESULTS / task, tmp_path)
    written = sorted(path.name for path in tmp_path.iterdir())
    assert "README.md" in written
    for name in written:
        if name.endswith(".png"):  # a plot: drawn again, its bytes depend on matplotlib's build
            assert (RESULTS / task / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
            continue
        assert (tmp_path / name).read_bytes() == (RESULTS / task / name).read_bytes(), name


def copy_run(source: Path, runs: Path, name: str) -> Path:
    shutil.copytree(source, runs / name)
    return runs / name


def test_summarize_reads_runs_in_progress_and_runs_of_other_names(tmp_path):
    """A runs folder as `run` leaves it: finished runs of a known model (two seeds, grouped),
    one of a name the table does not know (listed after, under its name), one still training
    (the trainer's metrics_epoch_*.json only) and a run's machine.json; the dev curves are
    drawn."""
    gold = RESULTS / "listops" / "spinn_pi_nt"
    copy_run(gold, tmp_path, "spinn_pi_nt")
    seed = copy_run(gold, tmp_path, "spinn_pi_nt_s1")
    copy_run(gold, tmp_path, "lstm_lr1e-3")
    test = json.loads((seed / "test_metrics.json").read_text())
    (seed / "test_metrics.json").write_text(json.dumps({**test, "accuracy": 0.9}))
    machine = {"cores": 2, "threads_per_job": 1, "jobs_at_once": 2, "load_mean": 2.1}
    (seed / "machine.json").write_text(json.dumps(machine))
    training = tmp_path / "spinn_s1"
    training.mkdir()
    for epoch, accuracy in enumerate([0.629, 0.6534, 0.64]):
        metrics = {"epoch": epoch, "best_epoch": min(epoch, 1), "training_duration": "0:01:00"}
        metrics["best_validation_accuracy"] = max(0.629, accuracy if epoch < 2 else 0.6534)
        (training / f"metrics_epoch_{epoch}.json").write_text(json.dumps(metrics))
    summary = write_summary("listops", tmp_path, tmp_path / "out")
    rows = [line for line in summary.sections["table"].splitlines() if line.startswith("| ")]
    cells = [row.split(" | ") for row in rows[1:]]
    assert [row[0] for row in cells] == [
        "| SPINN-PI-NT, gold trees (Model 0: a TreeLSTM)",
        "| lstm_lr1e-3",
    ]
    mean = (100 * test["accuracy"] + 90.0) / 2
    assert cells[0][1] == "2" and cells[0][2].startswith(f"{mean:.1f} ± ")
    assert summary.data["models"]["spinn_pi_nt"]["spinn_pi_nt_s1"]["machine"] == machine
    assert "| spinn_pi_nt_s1 | " in summary.sections["runs"]
    assert "| spinn_s1 | training | 3 | 2 | 0.6534 | 1 min |" in summary.sections["in_progress"]
    page = (tmp_path / "out" / "README.md").read_text()
    assert "| spinn_s1 | training |" in page and "| lstm_lr1e-3 |" in page
    assert (tmp_path / "out" / "dev_curves.png").read_bytes()[:4] == b"\x89PNG"


def test_a_run_without_params_json_is_counted_from_its_archive(tmp_path):
    """`collect` adds params.json (from the archive) and one epochs.json; archives, logs and
    the trainer's own files stay behind, and `summarize` then needs no archive."""
    runs, dest = tmp_path / "runs", tmp_path / "results"
    run = copy_run(RESULTS / "snli" / "spinn", runs, "spinn")
    (run / "params.json").unlink()
    shutil.copyfile(FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz",
                    run / "model.tar.gz")  # fmt: skip
    for epoch in (1, 0, 10):
        (run / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"epoch": epoch}))
    (run / "out.log").write_text("log")
    copy_run(RESULTS / "snli" / "lstm", runs, "lstm_no_test")
    (runs / "lstm_no_test" / "test_metrics.json").unlink()
    assert collect(runs, dest) == ["spinn"]
    params = json.loads((dest / "spinn" / "params.json").read_text())
    model_parameters = count_parameters(run / "model.tar.gz")
    assert params == {**model_parameters, "source": "the run's archive"}
    assert 0 < params["trainable_excluding_embedder"] < params["trainable"]
    epochs = json.loads((dest / "spinn" / "epochs.json").read_text())
    assert [epoch["epoch"] for epoch in epochs] == [0, 1, 10]
    assert not (dest / "spinn" / "model.tar.gz").exists()
    assert not (dest / "spinn" / "out.log").exists()
    table = summarize("snli", dest).sections["table"]
    millions = params["trainable_excluding_embedder"] / 1e6
    assert f"| SPINN (own parser at test) | config's | {millions:.2f}M |" in table


def test_unfinished_runs_are_collected_on_request_and_listed_as_in_progress(tmp_path):
    """`collect --unfinished` also copies a run still training (two processes: epochs 0-1,
    then 2 after a `--recover`) and one trained but not tested, without checkpoints; from the
    results folder alone the page lists both as in progress, with every process's time, and
    a run tested later replaces its unfinished copy."""
    runs, dest = tmp_path / "runs", tmp_path / "results"
    training = runs / "spinn_s1"
    training.mkdir(parents=True)
    write_epochs(training, ["0:01:00", "0:02:00"])
    record_resumption(training)
    write_epochs(training, ["0:03:00"], first=2)
    for epoch in range(3):
        path = training / f"metrics_epoch_{epoch}.json"
        metrics = json.loads(path.read_text())
        metrics.update(best_epoch=1, best_validation_accuracy=0.75)
        path.write_text(json.dumps(metrics))
    (training / "training_state_e3_b0.th").write_bytes(b"checkpoint")
    copy_run(RESULTS / "listops" / "lstm", runs, "lstm_s3")
    (runs / "lstm_s3" / "test_metrics.json").unlink()
    assert collect(runs, dest) == []
    assert collect(runs, dest, unfinished=True) == ["lstm_s3", "spinn_s1"]
    copied = sorted(path.name for path in (dest / "spinn_s1").iterdir())
    assert copied == ["epochs.json", "resumed.json"]
    lstm = json.loads((RESULTS / "listops" / "lstm" / "metrics.json").read_text())
    summary = summarize("listops", dest)
    rows = summary.sections["in_progress"].splitlines()
    assert "| spinn_s1 | training | 3 | 2 | 0.7500 | 5 min |" in rows
    lstm_minutes = training_seconds(runs / "lstm_s3", lstm) / 60
    assert f"| lstm_s3 | trained, not tested | {lstm['epoch'] + 1} | " in "".join(rows)
    assert any(row.endswith(f" | {lstm_minutes:.0f} min |") for row in rows)
    assert summary.sections["table"].count("| LSTM |") == 0  # not a result until tested
    (runs / "lstm_s3" / "test_metrics.json").write_text(
        (RESULTS / "listops" / "lstm" / "test_metrics.json").read_text()
    )
    assert collect(runs, dest) == ["lstm_s3"]
    summary = summarize("listops", dest)
    assert "lstm_s3" not in summary.sections["in_progress"]
    assert "| LSTM | 1 |" in summary.sections["table"]


def test_the_page_inserts_sections_and_refuses_unknown_ones():
    template = "# T\n\n<!-- insert: table -->\n\n<!-- insert: in_progress -->\n\nend\n"
    page = results_page("t", template, {"table": "| a |\n", "in_progress": ""})
    assert page.endswith("# T\n\n| a |\n\nend\n")  # the empty section and its blank line go
    assert page.startswith("<!-- Written by `scripts/experiments.py summarize t`")
    with pytest.raises(ValueError, match="'tabel'"):
        results_page("t", "<!-- insert: tabel -->\n", {"table": ""})


def test_committed_job_lists_name_configs_that_build_with_their_overrides():
    """scripts/jobs/*.tsv (runs prepared for later, e.g. bf16 against float32): every config
    exists and its encoder builds with the job's overrides (a mistyped key or value fails
    here, not hours into a queue)."""
    lists = sorted((PROJECT_ROOT / "scripts" / "jobs").glob("*.tsv"))
    assert lists
    for path in lists:
        for name, config, overrides in read_jobs(path):
            params = Params.from_file(
                str(PROJECT_ROOT / config), params_overrides=json.dumps(overrides)
            )
            # An empty vocabulary: a parser block with embeddings of its own reads its size.
            encoder = Seq2VecEncoder.from_params(params["model"]["encoder"], vocab=Vocabulary())
            expected = overrides.get("model.encoder.speed", {}).get("mixed_precision")
            # (An encoder other than spinn, e.g. the LSTM, has no such setting.)
            assert getattr(encoder, "mixed_precision", None) == expected, name


def test_the_benepar_runs_table(tmp_path):
    """results/parsing's table of benepar training runs, from the trainer's metrics JSON: an
    old run without unlabeled scores, a run on SST's bracketing, an unknown name last."""
    folder = tmp_path / "benepar"
    folder.mkdir()
    shutil.copy(PROJECT_ROOT / "models" / "benepar_snli_1pct.metrics.json", folder)
    new = json.loads((folder / "benepar_snli_1pct.metrics.json").read_text())
    new.update(steps=800, epochs=2.7, train_minutes=30.2, binarized_snli=True)
    new.update(sst_train_sentences=8034, dev={"f1": 0.8514})
    new["unlabeled"] = {"snli_dev": {"bracket_f1": 0.872}, "sst_holdout": {"bracket_f1": 0.6458}}
    (folder / "pilot_binarized_sst.metrics.json").write_text(json.dumps(new))
    (folder / "zz_other.metrics.json").write_text(json.dumps(new))
    table = summarize("parsing", tmp_path).sections["benepar_runs"].splitlines()
    assert table[0].startswith("| run | SNLI trees | SST train trees | steps (epochs) |")
    assert table[2:] == [
        "| `pilot_binarized_sst` | binarized | 8,034 | 800 (2.7) | 30 | 85.1 | 87.2 | 64.6 |",
        "| `benepar_snli_1pct` | n-ary | — | 2,114 (12.4) | 90 | 90.4 | — | — |",
        "| `zz_other` | binarized | 8,034 | 800 (2.7) | 30 | 85.1 | 87.2 | 64.6 |",
    ]


def write_epochs(run, durations, first=0):
    for epoch, duration in enumerate(durations, start=first):
        metrics = {"epoch": epoch, "training_duration": duration}
        (run / f"metrics_epoch_{epoch}.json").write_text(json.dumps(metrics))


def test_a_run_cut_off_twice_counts_every_process_time(tmp_path):
    """Each `--recover` starts a new process whose `training_duration` counts from its own
    start: the time trained is the sum of each process's last value, not the last epoch's."""
    # Processes: epochs 0-2 (210 s), 3-4 (100 s), 5 (45 s).
    write_epochs(tmp_path, ["0:01:00", "0:02:00", "0:03:30", "0:00:50", "0:01:40", "0:00:45"])
    assert trained_seconds(tmp_path) == 210 + 100 + 45
    # The last process goes on to epoch 10 (which sorts after 9 by number, not by name).
    write_epochs(tmp_path, ["0:01:30", "0:02:15", "0:03:00", "0:03:45", "0:04:30"], first=6)
    assert trained_seconds(tmp_path) == 210 + 100 + 270
    assert trained_seconds(tmp_path / "empty") == 0.0


def test_a_resumption_is_recorded_where_the_durations_cannot_show_it(tmp_path):
    """A process cut off after one 60 s epoch, then a resumed one whose first epoch took 90 s:
    the durations grow, so only the record written at the resumption shows two processes."""
    write_epochs(tmp_path, ["0:01:00"])
    assert record_resumption(tmp_path) == 60
    assert json.loads((tmp_path / "resumed.json").read_text()) == {
        "seconds_before": 60,
        "from_epoch": 1,
    }
    write_epochs(tmp_path, ["0:01:30", "0:03:00"], first=1)
    assert trained_seconds(tmp_path) == 60 + 180
    # Cut off again after epoch 2 and resumed: the record moves on.
    assert record_resumption(tmp_path) == 240
    write_epochs(tmp_path, ["0:00:40"], first=3)
    assert trained_seconds(tmp_path) == 240 + 40


def test_a_moved_run_folder_records_its_best_weights_where_it_now_is(tmp_path):
    """AllenNLP's training state names best.th by the path of the folder that trained it; a
    folder unpacked or copied elsewhere has each state pointed at its own best.th (the rest of
    the state kept), a state already pointing there, or at none yet, left as it is."""
    run = tmp_path / "moved"
    run.mkdir()
    rng = torch.Generator().manual_seed(0).get_state()
    moved = {"best_model_filename": "/elsewhere/moved/best.th", "epochs_completed": 3, "rng": rng}
    torch.save(moved, run / "training_state_e3_b0.th")
    torch.save({"best_model_filename": None}, run / "training_state_e0_b5.th")
    here = {"best_model_filename": str(run / "best.th")}
    torch.save(here, run / "training_state_e4_b0.th")
    assert repoint_best_weights(run) == ["training_state_e3_b0.th"]
    state = torch.load(run / "training_state_e3_b0.th", weights_only=False)
    assert state["best_model_filename"] == str(run.resolve() / "best.th")
    assert state["epochs_completed"] == 3 and torch.equal(state["rng"], rng)
    assert repoint_best_weights(run) == []
    assert sorted(path.name for path in run.iterdir()) == [
        "training_state_e0_b5.th",
        "training_state_e3_b0.th",
        "training_state_e4_b0.th",
    ]


def test_a_cut_off_run_goes_on_with_recover_and_counts_both_processes_time(
    tmp_path, monkeypatch, capsys
):
    """A run folder with a checkpoint but no metrics.json (the process ended mid-training) is
    resumed with `allennlp train --recover`, not restarted: the epochs it had finished stay
    (their metrics files are not rewritten), and wall.json adds the cut-off process's training
    time to the resumed one's. It goes on the same way on another machine, from what `pack`
    kept of it and `unpack` restored into an empty runs folder elsewhere: with the learning
    rate 0 and the batches unshuffled the resumed epoch's loss ties the first's, so it is not
    the best, and training ends by loading the first process's best.th, which must be looked
    for in the new folder (AllenNLP recorded the old one's)."""
    monkeypatch.chdir(PROJECT_ROOT)
    monkeypatch.setenv("FIXTURES", str(FIXTURES_ROOT))
    config = "fixtures/classification/basic_classifier_spinn.jsonnet"
    test_data = "fixtures/classification/sst_binary_sample.jsonl"
    jobs = tmp_path / "jobs.tsv"
    overrides = {"trainer.num_epochs": 3, "trainer.optimizer.lr": 0.0}
    overrides["data_loader.shuffle"] = False
    jobs.write_text(f"tiny\t{config}\t{json.dumps(overrides)}\n")
    runs = tmp_path / "runs"
    options = ["--threads", "1", "--test-data", test_data]
    EXPERIMENTS.main(["run", str(jobs), str(runs), *options])
    run = runs / "tiny"
    # Every epoch ties the first, whose weights best.th holds from then on.
    assert json.loads((run / "metrics.json").read_text())["best_epoch"] == 0
    # Cut off after the second epoch (the first checkpoint whose state names best.th: the one
    # after the first epoch is written before best.th is): the third epoch's files and the
    # final ones gone.
    for name in ("metrics.json", "test_metrics.json", "metrics_epoch_2.json", "model.tar.gz"):
        (run / name).unlink()
    for path in run.glob("*_state_e3_*.th"):
        path.unlink()
    before = trained_seconds(run)
    assert before > 0
    # The next machine: only the pack reaches it.
    packs = tmp_path / "packs"
    EXPERIMENTS.main(["pack", str(runs), str(packs)])
    assert capsys.readouterr().out.splitlines()[-1] == f"1 runs -> {packs}: tiny"
    shutil.rmtree(runs)
    runs = tmp_path / "next_machine" / "runs"
    run = runs / "tiny"
    EXPERIMENTS.main(["unpack", str(packs), str(runs)])
    assert capsys.readouterr().out.strip() == f"1 runs -> {runs}: tiny"
    assert not (run / "out.log").exists()  # what --recover does not need stayed behind
    first_epoch = (run / "metrics_epoch_0.json").stat().st_mtime_ns
    EXPERIMENTS.main(["run", str(jobs), str(runs), *options])
    assert capsys.readouterr().out.splitlines()[-1].startswith("tiny: done in ")
    log = (runs / "tiny.log").read_text()
    assert "Recovering from prior training" in log
    assert "FileNotFoundError" not in log
    assert (run / "metrics_epoch_0.json").stat().st_mtime_ns == first_epoch
    metrics = json.loads((run / "metrics.json").read_text())
    assert (metrics["epoch"], metrics["best_epoch"]) == (2, 0)
    wall = json.loads((run / "wall.json").read_text())
    assert wall["recovered_after_seconds"] == before
    assert wall["train_wall_seconds"] > before
    assert (run / "test_metrics.json").exists()


def test_pack_refuses_a_checkpoint_whose_best_weights_are_not_yet_written_and_unpack_keeps_newer(
    tmp_path,
):
    """The trainer writes an epoch's checkpoint, then (when that epoch is the best) best.th: a
    run caught between the two would recover with stale best weights, so `pack` refuses it.
    `unpack` leaves a run folder that exists alone (the run went on here), and only runs with
    a checkpoint and no metrics.json are packed, with the metrics of the epochs it holds."""
    runs = tmp_path / "runs"
    run = runs / "cut"
    (run / "vocabulary").mkdir(parents=True)
    (run / "config.json").write_text("{}")
    (run / "metrics_epoch_0.json").write_text(json.dumps({"epoch": 0, "best_epoch": 0}))
    (run / "best.th").write_text("epoch 0")
    for kind in ("model", "training"):
        (run / f"{kind}_state_e1_b0.th").write_text("epoch 0")
    # Epoch 1 finished and was the best; its checkpoint is written, best.th not yet.
    (run / "metrics_epoch_1.json").write_text(json.dumps({"epoch": 1, "best_epoch": 1}))
    (run / "model_state_e2_b0.th").write_text("epoch 1")
    (run / "training_state_e2_b0.th").write_text("epoch 1")
    with pytest.raises(ValueError, match="best.th is not yet its best checkpoint"):
        pack(runs, tmp_path / "packs")
    # The trainer hard-links best.th to the checkpoint's model state (or copies it); a copy of
    # the folder made with `cp -r` may leave best.th the older file, and is still packed.
    (run / "best.th").unlink()
    shutil.copyfile(run / "model_state_e2_b0.th", run / "best.th")
    old = (run / "model_state_e2_b0.th").stat().st_mtime - 10
    os.utime(run / "best.th", (old, old))
    finished_run(runs, "done")
    # Epoch 2's metrics are written, its checkpoint not yet: --recover trains it again.
    (run / "metrics_epoch_2.json").write_text(json.dumps({"epoch": 2, "best_epoch": 2}))
    assert pack(runs, tmp_path / "packs") == ["cut"]
    with tarfile.open(tmp_path / "packs" / "cut.tar.gz") as archive:
        names = sorted(archive.getnames())
    kept = ["best.th", "config.json", "metrics_epoch_0.json", "metrics_epoch_1.json"]
    kept += ["model_state_e2_b0.th", "training_state_e2_b0.th", "vocabulary"]
    assert names == [f"cut/{name}" for name in kept]
    assert unpack(tmp_path / "packs", runs) == []
    assert (run / "model_state_e1_b0.th").exists()
    assert unpack(tmp_path / "packs", tmp_path / "elsewhere") == ["cut"]
    assert (tmp_path / "elsewhere" / "cut" / "best.th").read_text() == "epoch 1"
