"""benchmarks/gpu_checks.sh in its smoke mode (`--device cpu`: every step at toy sizes), so that
the GPU script cannot rot while no GPU is lent: each step runs and passes, and the one that needs
a copy of the old code says it is skipped."""

import subprocess

from spinn_allennlp.testing import PROJECT_ROOT


def test_the_gpu_script_runs_every_step_on_the_cpu(tmp_path):
    results = tmp_path / "gpu_checks"
    done = subprocess.run(
        # (--old: no copy of the old code, even where a developer keeps one in .old_code.)
        ["bash", "benchmarks/gpu_checks.sh", "--device", "cpu", "--results", str(results)]
        + ["--old", str(tmp_path / "no_old_code")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {}
    for line in (results / "summary.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("step", "---"):
            rows[cells[0]] = cells[1]
    assert rows["versions"].startswith("skipped: no copy of the old code"), rows
    others = {step: status for step, status in rows.items() if step != "versions"}
    assert set(others) == {
        "tests",
        "fused_encoding",
        "graph_memory",
        "snli_training",
        "listops_epoch",
    }, rows
    assert set(others.values()) == {"passed"}, rows
    assert (results / "snli_training_cpu.json").exists()
    # The fused kernels ran (in Triton's interpreter) beside the step loop they replace.
    encoding = (results / "encoding_speed_cpu.md").read_text()
    assert "SPINN (own parser), fused kernels" in encoding and "nn.LSTM" in encoding
