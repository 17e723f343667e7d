"""The plugin as someone else installs it: a wheel built from this checkout, installed into a
fresh virtual environment made from the lock, used from a directory outside the repository.

The lock's torch (PyPI's build: with the CUDA libraries and Triton it brings, about 5 GB) is not
installed a second time: the fresh environment finds those packages, at the locked versions,
through links to this checkout's environment (:func:`link_heavy_packages`), and pip installs the
rest of the lock around them, as it would around a torch a user installed first."""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from importlib import metadata
from pathlib import Path
from typing import List

import pytest

from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT
from tools.testing.configs import SNLI_SAMPLE, snli_small_overrides
from tools.testing.hostile import RAW_PAIRS

ARCHIVE = FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz"
# The interpreter `make setup` builds .venv from.
PYTHON = os.environ.get("PYTHON", "python3")


def run(*command, cwd, env=None, check=True, timeout=900):
    environment = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    # Nothing of this checkout's environment may leak into the fresh one.
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "SNLI_TRAIN", "SNLI_DEV", "SNLI_TEST"):
        if name not in (env or {}):
            environment.pop(name, None)
    result = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, command))} exited with {result.returncode}:\n"
            + result.stdout[-3000:]
            + result.stderr[-3000:]
        )
    return result


def is_heavy(name: str) -> bool:
    """torch, Triton and the CUDA libraries torch brings (nvidia-*, cuda-*)."""
    name = name.lower().replace("_", "-")
    return name in ("torch", "triton") or name.startswith(("nvidia-", "cuda-"))


def link_heavy_packages(folder: Path, python: Path) -> List[str]:
    """Links every file tree of this environment's heavy distributions (their packages and
    metadata, by the distributions' own file lists) into ``folder``, and puts ``folder`` on the
    path of the environment of ``python`` (a .pth file). Returns the distributions linked."""
    here = Path(sysconfig.get_paths()["purelib"])
    folder.mkdir()
    linked = []
    for distribution in metadata.distributions():
        name = distribution.metadata["Name"]
        if not is_heavy(name):
            continue
        linked.append(f"{name}=={distribution.version}")
        for path in distribution.files or []:
            top = path.parts[0]
            # (Console scripts live outside site-packages: "../../bin/...".)
            if top != ".." and not (folder / top).exists() and (here / top).exists():
                (folder / top).symlink_to(here / top)
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                  cwd=folder).stdout.strip()  # fmt: skip
    (Path(purelib) / "spinn_linked_torch.pth").write_text(f"{folder}\n", encoding="utf-8")
    return sorted(linked)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, a working directory outside the repository)."""
    root = tmp_path_factory.mktemp("elsewhere")
    start = time.perf_counter()
    # setuptools never empties build/lib: files moved out of the package since an earlier build
    # would ship again.
    shutil.rmtree(PROJECT_ROOT / "build", ignore_errors=True)
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--disable-pip-version-check",
        "-w",
        root / "dist",
        PROJECT_ROOT,
        cwd=root,
    )
    (wheel,) = (root / "dist").glob("spinn_allennlp-*.whl")
    built = time.perf_counter()
    run(PYTHON, "-m", "venv", root / "venv", cwd=root)
    python = root / "venv" / "bin" / "python"
    version = "import sys; print(sys.version_info[:2])"
    assert run(python, "-c", version, cwd=root).stdout == run(sys.executable, "-c", version,
                                                              cwd=root).stdout  # fmt: skip
    linked = link_heavy_packages(root / "linked", python)
    assert any(name.startswith("torch==") for name in linked), linked
    # --no-compile: byte-compiling all of torch and transformers up front doubles the time;
    # what is imported gets compiled on first use.
    pip = (
        python,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-compile",
    )
    lock = run(*pip, "-r", PROJECT_ROOT / "requirements" / "lock.txt", cwd=root).stdout
    # The linked packages were taken as installed at the locked versions, not fetched again.
    assert "Requirement already satisfied: torch==" in lock, lock[-2000:]
    assert not re.search(r"(Collecting|Downloading|Processing) torch(==|-\d)", lock)
    run(*pip, wheel, cwd=root)
    installed = time.perf_counter()
    print(f"wheel {built - start:.1f} s, venv from the lock + wheel {installed - built:.1f} s")
    work = root / "work"
    work.mkdir()
    return python, work, wheel


@pytest.mark.robustness
def test_the_wheel_holds_the_plugin_and_the_core_and_none_of_the_lab(installed):
    """The wheel: the packages spinn_allennlp and spinn_core, the warnings start-up file and
    the metadata; the lab (tools/: benepar training, the ListOps generator, parse scoring,
    the suite's helpers), the tests, scripts and benchmarks stay in the repository."""
    python, work, wheel = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"spinn_allennlp", "spinn_core", "spinn_allennlp_warnings.pth"}, tops
    lab = ("benepar_training", "parse_quality", "listops_generator", "hostile", "browser")
    assert not [name for name in names if any(part in name for part in lab)]
    # The core imports by its own name from the installed wheel, without AllenNLP loading.
    script = (
        "import sys, spinn_core, spinn_core.testing; print(spinn_core.__file__, "
        "sorted(m for m in sys.modules if m.split('.')[0] == 'allennlp'))"
    )
    where = run(python, "-c", script, cwd=work).stdout
    assert "site-packages" in where and where.strip().endswith("[]")


@pytest.mark.robustness
def test_the_wheel_installs_and_runs_from_elsewhere(installed):
    python, work, _ = installed
    # The package comes from the wheel, not this checkout.
    where = run(python, "-c", "import spinn_allennlp; print(spinn_allennlp.__file__)", cwd=work)
    assert "site-packages" in where.stdout and str(PROJECT_ROOT) not in where.stdout

    result = run(
        python, "-m", "allennlp", "test-install", "--include-package", "spinn_allennlp", cwd=work
    )
    assert "AllenNLP version 2.10.1 installed" in result.stdout + result.stderr

    config = PROJECT_ROOT / "training_config" / "spinn.jsonnet"
    small = {k: v for k, v in snli_small_overrides("spinn").items() if "data_path" not in k}
    train = (python, "-m", "allennlp", "train", config, "--include-package", "spinn_allennlp")

    # The configs' default data paths are relative to the repository root; from elsewhere the
    # variables say where the data is (without them: an error naming them, tests/data/
    # test_paths.py).
    data = {"SNLI_TRAIN": str(SNLI_SAMPLE), "SNLI_DEV": str(SNLI_SAMPLE)}
    run(*train, "-s", work / "model", "-o", json.dumps(small), cwd=work, env=data)
    metrics = json.loads((work / "model" / "metrics.json").read_text())
    assert 0.0 <= metrics["validation_accuracy"] <= 1.0

    # The model archived by 0.1.0 loads and predicts from here too.
    run(
        python,
        "-m",
        "allennlp",
        "predict",
        ARCHIVE,
        RAW_PAIRS,
        "--output-file",
        work / "predictions.jsonl",
        "--silent",
        "--include-package",
        "spinn_allennlp",
        cwd=work,
    )
    predictions = (work / "predictions.jsonl").read_text().splitlines()
    expected = (FIXTURES_ROOT / "pair_classification" / "archives").glob("*.predictions.jsonl")
    (expected_file,) = expected
    assert [json.loads(p)["label"] for p in predictions] == [
        json.loads(p)["label"] for p in expected_file.read_text().splitlines()
    ]
