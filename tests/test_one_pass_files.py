"""One pass from `SpinnEncoder.forward` to the sentence vector runs in the files that
docs/design.md lists ("One pass, file by file", as many as it says), traced: every module of
ours whose code runs (functions, methods, and the `__init__` of dataclasses, which run with
their module's globals) in the second of two identical passes (the first builds what is
cached)."""

import re
import sys
from pathlib import Path
from typing import Set

import pytest
import torch

from spinn_allennlp.modules.encoder_settings import TrackerSettings
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.testing import PROJECT_ROOT
from spinn_core.transitions import PAD, balanced_transitions

OURS = ("spinn_core", "spinn_allennlp")


def modules_run(encoder: SpinnEncoder, *inputs: torch.Tensor) -> Set[str]:
    """The modules of ours with code that runs in `encoder(*inputs)`."""
    seen: Set[str] = set()

    def record(frame, event, _arg) -> None:
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.split(".")[0] in OURS:
                seen.add(module)

    with torch.no_grad():
        encoder(*inputs)
        sys.setprofile(record)
        try:
            encoder(*inputs)
        finally:
            sys.setprofile(None)
    return seen


def design_page_files() -> Set[str]:
    """The modules of the numbered list in docs/design.md's "One pass, file by file"."""
    page = (PROJECT_ROOT / "docs" / "design.md").read_text()
    section = page.split("## One pass, file by file")[1].split("\n## ")[0]
    paths = re.findall(r"^\d+\. `([\w/]+\.py)`", section, flags=re.MULTILINE)
    return {".".join(Path(path).with_suffix("").parts) for path in paths}


def batch():
    torch.manual_seed(0)
    inputs = torch.randn(3, 5, 8)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1, 3:] = False
    lengths = [int(n) for n in mask.sum(1)]
    steps = 2 * max(lengths) - 1
    transitions = torch.tensor(
        [balanced_transitions(n) + [PAD] * (steps - (2 * n - 1)) for n in lengths]
    )
    return inputs, mask, transitions


NUMBERS = {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
           "fourteen": 14, "fifteen": 15, "sixteen": 16}  # fmt: skip


def test_the_page_lists_as_many_files_as_it_says():
    page = (PROJECT_ROOT / "docs" / "design.md").read_text()
    section = page.split("## One pass, file by file")[1].split("\n## ")[0]
    said = re.search(r"or policy\), (\w+) files:", section)
    assert said is not None and said.group(1) in NUMBERS, "the page says how many files"
    assert len(design_page_files()) == NUMBERS[said.group(1)], design_page_files()


@pytest.mark.parametrize(
    "variant, tracker, given, runner",
    [
        ("full SPINN, its greedy parse", TrackerSettings(4, predict_transitions=True), False, None),
        ("SPINN-PI, given trees", TrackerSettings(4), True, None),
        ("SPINN-PI-NT, given trees", None, True, "spinn_core.runners.levelwise"),
    ],
)
def test_one_pass_runs_in_the_listed_files(variant, tracker, given, runner):
    inputs, mask, transitions = batch()
    encoder = SpinnEncoder(8, 8, tracker=tracker).eval()
    run = modules_run(encoder, inputs, mask, transitions if given else None)
    expected = design_page_files()
    if runner is not None:
        # Level by level: the cell's plain forward, not its loop form (nor the loop's products).
        loop_only = {
            "spinn_core.runners.thin_stack",
            "spinn_core.compositions.base",
            "spinn_core.loop_linear",
        }
        expected = (expected - loop_only) | {runner}
    assert run == expected, (variant, sorted(run ^ expected))
