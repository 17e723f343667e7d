"""Every shell command the README and docs/ show refers to things that exist: files in the
repository, make targets, script options, registered predictors. (Running them verbatim takes
hours of training; what is checked here is what goes stale when code moves. docs/testing.md says
which commands were also run verbatim, and with what output.)"""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import torch
from allennlp.predictors import Predictor

import spinn_allennlp.plugin  # noqa: F401  (registers the predictors)
from spinn_allennlp.testing import PROJECT_ROOT
from spinn_core.spinn import Spinn
from spinn_core.transitions import REDUCE, SHIFT

RESULTS_PAGES = sorted((PROJECT_ROOT / "results").glob("*/README.md"))
DOCUMENTS = [
    PROJECT_ROOT / "README.md",
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
    PROJECT_ROOT / "benchmarks" / "README.md",
    *RESULTS_PAGES,
]
# Paths under these are repository files when a command names them.
REPOSITORY_DIRS = ("training_config/", "scripts/", "data/", "benchmarks/", "fixtures/", "models/",
                   "docs/", "requirements/")  # fmt: skip
# What commands write or download: not expected to exist in a fresh clone.
PRODUCED = ("out/", "runs/", "data/listops/generated/", "/tmp/")
OUTPUT_OPTIONS = {"-s", "-o", "--out", "--output-file", "--serialization-dir"}


def commands() -> List[Tuple[str, str]]:
    """(where, command) for every command line of every ```bash block, continuation lines
    joined and comments dropped."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text()
        for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split(" #")[0].strip()
                if line and not line.startswith("#"):
                    found.append((document.relative_to(PROJECT_ROOT).as_posix(), line))
    return found


COMMANDS = commands()


def words(command: str) -> List[str]:
    return shlex.split(command)


def test_the_documents_have_commands():
    assert len(COMMANDS) > 40
    assert any("allennlp train training_config/spinn.jsonnet" in c for _, c in COMMANDS)


@pytest.mark.parametrize("where, command", COMMANDS, ids=[c[:60] for _, c in COMMANDS])
def test_named_repository_files_exist(where, command):
    tokens = words(command)
    for position, token in enumerate(tokens):
        previous = tokens[position - 1] if position else ""
        if previous in OUTPUT_OPTIONS or previous == ">" or token.startswith(">"):
            continue
        for candidate in re.split(r"[=,]", token):
            path = candidate.split("#")[0]  # SICK.txt.gz#TEST names a split
            if not path.startswith(REPOSITORY_DIRS) or path.startswith(PRODUCED):
                continue
            if any(ch in path for ch in "*[]{}<>$"):
                continue  # a pattern or placeholder, e.g. runs/listops/<variant>/
            assert (PROJECT_ROOT / path).exists(), f"{where}: `{command}` names {path}"


def make_targets() -> set:
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w-]*):", makefile, flags=re.M))


@pytest.mark.parametrize("where, command", COMMANDS, ids=[c[:60] for _, c in COMMANDS])
def test_make_targets_and_script_options_exist(where, command):
    tokens = words(command)
    # Leading VAR=value assignments, then the program.
    while tokens and re.fullmatch(r"[A-Z_]+=.*", tokens[0]):
        tokens = tokens[1:]
    if tokens and tokens[0] == "make":
        for target in tokens[1:]:
            assert target in make_targets(), f"{where}: `{command}`: no make target {target}"
    scripts = [t for t in tokens if t.endswith((".py", ".sh")) and "/" in t and "=" not in t]
    if scripts and not tokens[-1].endswith("--help"):
        source = (PROJECT_ROOT / scripts[0]).read_text()
        for option in (t.split("=")[0] for t in tokens if t.startswith("--")):
            assert option in source, f"{where}: `{command}`: {scripts[0]} has no {option}"


def test_predictors_named_in_commands_are_registered():
    named = {
        tokens[tokens.index("--predictor") + 1]
        for _, command in COMMANDS
        if "--predictor" in (tokens := words(command))
    }
    assert named, "no command names a predictor"
    for name in named:
        assert Predictor.by_name(name)


def test_readme_commands_have_no_paths_outside_the_repository():
    for where, command in COMMANDS:
        assert "../" not in command, f"{where}: `{command}` reaches outside the repository"


def test_the_readme_is_a_newcomers_page_that_links_every_results_page():
    """Results live in results/<task>/README.md; the README links each and stays short."""
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 320
    assert RESULTS_PAGES
    for page in RESULTS_PAGES:
        assert f"({page.relative_to(PROJECT_ROOT).as_posix()})" in readme, page


# Where this project's machines keep checkouts and runs: no document or source file names them.
MACHINE_PATHS = re.compile(r"(?<![\w.])/(?:work|root|home|Users|mnt)/")


def written_files():
    for pattern in ("*.md", "*.py", "*.sh", "*.jsonnet", "*.libsonnet", "*.toml", "*.cfg"):
        for path in PROJECT_ROOT.glob(f"**/{pattern}"):
            relative = path.relative_to(PROJECT_ROOT).as_posix()
            if not relative.startswith((".venv", "build/", "dist/", "out/", "runs/", "data/")):
                yield path


def committed_text_files() -> List[Path]:
    """Every file git tracks that is text (no NUL byte in its first 8 KB), this one aside: it
    names the paths it looks for."""
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True
    ).stdout.decode()
    files = []
    for name in filter(None, listing.split("\0")):
        path = PROJECT_ROOT / name
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        with path.open("rb") as handle:
            if b"\0" not in handle.read(8192):
                files.append(path)
    return files


# Absolute paths of a machine: checkouts, runs and scratch folders (/tmp too: a committed file
# that names one names where it was made).
ABSOLUTE_MACHINE_PATHS = re.compile(r"(?<![\w.])/(?:work|root|home|Users|mnt|tmp)/")


def test_no_committed_text_file_names_an_absolute_machine_path():
    """Results, benchmarks' JSON, configs and job lists included: a user copying a run's
    config.json found the archive path of the machine it ran on."""
    files = committed_text_files()
    assert len(files) > 200 and any(path.suffix == ".json" for path in files)
    found = [
        f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()[:160]}"
        for path in files
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if ABSOLUTE_MACHINE_PATHS.search(line)
    ]
    assert not found, "\n".join(found)


def test_no_document_or_source_names_a_path_of_the_machine_it_was_made_on():
    found = [
        f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()}"
        for path in written_files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if MACHINE_PATHS.search(line)
    ]
    assert not found, "\n".join(found)


# Every `python -m MODULE` and console command that the documents name, and how it runs
# here: a server with `--help` (it would serve until stopped), the rest as written, in a scratch
# directory. A module named in a document but missing here fails the test, so a new command
# gets run too.
MODULE = re.compile(r"python3? -m ([\w.]+)")
CONSOLE_SCRIPTS = dict(
    re.findall(r'"([\w-]+)=([\w.]+):\w+"', (PROJECT_ROOT / "setup.py").read_text())
)
# The README's own predictions.jsonl line (the full SPINN's output): a real input for the page.
README_PREDICTION = re.search(
    r"```json\n(\{.*?\})\n```", (PROJECT_ROOT / "README.md").read_text(), flags=re.S
)
HOW_TO_RUN = {
    "spinn_allennlp.demo": ["--help"],
    "spinn-demo": ["--help"],
    "spinn_allennlp.demo.static": ["predictions.jsonl", "-o", "predictions.html"],
    # pytest's own module, in benchmarks/README: what it runs there, collected from the checkout.
    "pytest": [
        str(PROJECT_ROOT / "tests" / "core"),
        "-q",
        "--collect-only",
        "-p",
        "no:cacheprovider",
    ],
}


def documented_commands() -> List[Tuple[str, str]]:
    """(where, module or console command) for each one the user's documents (the results pages
    aside: they record how runs were made) name, in prose or code."""
    found = set()
    for document in (document for document in DOCUMENTS if document not in RESULTS_PAGES):
        text = document.read_text()
        where = document.relative_to(PROJECT_ROOT).as_posix()
        found.update((where, module) for module in MODULE.findall(text))
        found.update(
            (where, script)
            for script in CONSOLE_SCRIPTS
            if re.search(rf"(?<![\w/-]){re.escape(script)}(?![\w-])", text)
        )
    return sorted(found)


DOCUMENTED = documented_commands()


def test_the_documents_name_the_demo_commands():
    named = {command for _, command in DOCUMENTED}
    assert {"spinn_allennlp.demo", "spinn_allennlp.demo.static", "spinn-demo"} <= named


@pytest.mark.parametrize("where, command", DOCUMENTED, ids=[c for _, c in DOCUMENTED])
def test_every_documented_module_and_console_command_runs(where, command, tmp_path):
    assert command in HOW_TO_RUN, f"{where} names `{command}`: say in HOW_TO_RUN how to run it"
    if command in CONSOLE_SCRIPTS:
        program = [str(Path(sys.executable).parent / command)]
    else:
        program = [sys.executable, "-m", command]
    assert README_PREDICTION, "the README shows no predictions.jsonl line"
    (tmp_path / "predictions.jsonl").write_text(README_PREDICTION.group(1) + "\n")
    result = subprocess.run(
        program + HOW_TO_RUN[command],
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{where}: `{command}` failed:\n{result.stderr[-3000:]}"
    if HOW_TO_RUN[command] == ["--help"]:
        assert result.stdout.startswith("usage:"), result.stdout
    if command == "spinn_allennlp.demo.static":
        page = (tmp_path / "predictions.html").read_text()
        assert page.count("<svg") == 2 and "Animals" in page  # both trees, the hypothesis's words


def test_what_the_readmes_commands_write_is_git_ignored():
    """The quick start's files (pairs.jsonl, predictions.jsonl, predictions.html) and its
    output folders stay out of `git status` in the checkout they are run from."""
    written = set()
    for where, command in COMMANDS:
        if where != "README.md":
            continue
        tokens = words(command)
        # `allennlp ... -o` gives overrides; other programs' `-o` is an output file.
        outputs = {"-s", "--output-file", ">"} | (
            set() if tokens[0].split("/")[-1] == "allennlp" else {"-o"}
        )
        for position, token in enumerate(tokens[:-1]):
            if token in outputs:
                written.add(tokens[position + 1])
    assert {"pairs.jsonl", "predictions.jsonl", "predictions.html", "out/smoke"} <= written
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", *sorted(written)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert set(result.stdout.split()) == written, result.stderr


README_PARSE = re.compile(
    r"`(tokens, transitions = spinn_core\.transitions\.parse_to_transitions\(.*?\))`"
)


def test_the_readmes_parse_to_transitions_line_runs_as_written():
    """`parse_to_transitions` returns (tokens, transitions): the README's line unpacks both
    and states what they are."""
    readme = (PROJECT_ROOT / "README.md").read_text()
    match = README_PARSE.search(readme.replace("\n", " "))
    assert match, "the README shows no `tokens, transitions = spinn_core.transitions.parse_to_...`"
    namespace: dict = {}
    exec("import spinn_core\n" + match.group(1), namespace)
    tokens, transitions = namespace["tokens"], namespace["transitions"]
    stated = f"gives `{json.dumps(tokens)}`, `{json.dumps(transitions)}`"
    assert stated in readme.replace("\n", " "), stated


def _python_blocks(path: Path) -> List[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_the_design_page_s_policy_example_runs_as_written():
    """docs/design.md's policy of a few lines runs as it stands, its imports included (a reader
    copies it whole), and composes the left-branching tree of every sentence."""
    blocks = [b for b in _python_blocks(PROJECT_ROOT / "docs" / "design.md") if "class " in b]
    assert blocks
    namespace: Dict[str, Any] = {}
    exec(compile(blocks[0], "docs/design.md", "exec"), namespace)  # noqa: S102
    policy = namespace["ReduceWhenLegal"]()
    torch.manual_seed(0)
    output = Spinn(4, 3).eval()(
        torch.randn(2, 4, 4), torch.ones(2, 4, dtype=torch.bool), policy=policy
    )
    assert output.transitions.tolist() == [[SHIFT, SHIFT, REDUCE, SHIFT, REDUCE, SHIFT, REDUCE]] * 2
