"""benchmarks/fused_compile_report.py in its quick mode, on every CI run: every fused kernel
still compiles for sm_80 and sm_90 with the Triton the locks pin (no GPU needed), without
spilling registers, in one variant per kernel and dtype. (The full report, every variant the
runner launches, is committed in benchmarks/results/fused_compile/.)"""

import json
import subprocess
import sys

from spinn_allennlp.testing import PROJECT_ROOT
from spinn_core.fused.kernels import KERNELS


def test_every_kernel_compiles_for_both_chips_without_spilling(tmp_path):
    done = subprocess.run(
        [sys.executable, "benchmarks/fused_compile_report.py", "--quick", "--archs", "80,90"]
        + ["--out", str(tmp_path)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads((tmp_path / "report.json").read_text())["kernels"]
    assert {row["kernel"] for row in rows} == set(KERNELS)
    assert {row["arch"] for row in rows} == {"sm_80", "sm_90"}
    for row in rows:
        assert row["spill_stores"] == row["spill_loads"] == 0, row
        assert 0 < row["registers"] <= 255, row
