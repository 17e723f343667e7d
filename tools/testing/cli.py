"""The AllenNLP command line, run as a user runs it: in a subprocess (its import takes ~16 s,
so tests call it sparingly); and plain Python in a fresh interpreter."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence, Union

from spinn_core.testing.paths import FIXTURES_ROOT


def run_allennlp(
    *args: str,
    cwd: Union[str, Path],
    env: Optional[Dict[str, str]] = None,
    timeout: float = 900,
    check: bool = True,
) -> subprocess.CompletedProcess:
    """Runs `python -m allennlp *args` in `cwd` with this interpreter; `FIXTURES` in the
    environment points at the fixtures (configs under fixtures/ read it with std.extVar).
    With `check`, a non-zero exit raises AssertionError with the end of its output."""
    # One thread per process: tests use tiny models (see tests/conftest.py).
    environment = {
        "OMP_NUM_THREADS": "1",
        **os.environ,
        "FIXTURES": str(FIXTURES_ROOT),
        **(env or {}),
    }
    result = subprocess.run(
        [sys.executable, "-m", "allennlp", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"allennlp {' '.join(args)} exited with {result.returncode}:\n"
            + result.stdout[-3000:]
            + result.stderr[-3000:]
        )
    return result


def run_allennlp_commands(
    commands: Sequence[Sequence[str]],
    cwd: Union[str, Path],
    env: Optional[Dict[str, str]] = None,
    timeout: float = 900,
    site_dir: Optional[Union[str, Path]] = None,
) -> subprocess.CompletedProcess:
    """Runs several `allennlp` commands (each an argument list, as after `allennlp`) one after
    the other in ONE fresh interpreter, each through AllenNLP's own command-line entry point:
    the CLI's ~16 s import is paid once. Environment as `run_allennlp`; a command that fails
    raises AssertionError with the end of the output. (After a `train`, AllenNLP's logging
    writes INFO and WARNING records to stdout, errors to stderr.) `site_dir`: a directory
    whose `.pth` start-up files Python runs first, as for an installed package's."""
    startup = f"import site\nsite.addsitedir({str(site_dir)!r})\n" if site_dir else ""
    code = (
        f"import sys\n{startup}"
        # What the `allennlp` command runs (its logging set-up included).
        "from allennlp.__main__ import run\n"
        f"for args in {[list(command) for command in commands]!r}:\n"
        "    sys.argv = ['allennlp', *args]\n"
        "    print('>>> allennlp', ' '.join(args), file=sys.stderr, flush=True)\n"
        "    run()\n"
    )
    environment = {
        "OMP_NUM_THREADS": "1",
        **os.environ,
        "FIXTURES": str(FIXTURES_ROOT),
        **(env or {}),
    }
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"allennlp commands exited with {result.returncode}:\n"
            + result.stdout[-3000:]
            + result.stderr[-5000:]
        )
    return result


def run_python(code: str, cwd: Union[str, Path], timeout: float = 300) -> str:
    """Runs `python -c code` in a fresh interpreter (a clean `sys.modules`) and returns what it
    printed; a non-zero exit raises AssertionError with its stderr."""
    environment = {"OMP_NUM_THREADS": "1", **os.environ}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"python -c exited with {result.returncode}:\n" + result.stderr[-3000:]
        )
    return result.stdout
