"""`summarize`: a task's table.md, summary.json and results page (README.md, from about.md with
its `<!-- insert: ... -->` markers)."""

import re
from pathlib import Path
from typing import Dict

from experiment_pipeline.listops import plot_listops_curves, summarize_listops
from experiment_pipeline.parsing import summarize_parsing
from experiment_pipeline.snli import summarize_snli, summarize_snli_attention
from experiment_pipeline.sst_sick import summarize_seeded
from experiment_pipeline.tables import Summary

INSERT = re.compile(r"^<!-- insert: ([\w.-]+) -->$")
DEFAULT_PAGE = "# {task} runs\n\n<!-- insert: table -->\n\n<!-- insert: in_progress -->\n"


def results_page(task: str, template: str, sections: Dict[str, str]) -> str:
    """
    The results page (README.md): the hand-written `template` (`about.md`) with each line
    `<!-- insert: NAME -->` replaced by the generated section NAME (an empty section and the
    blank line after it drop out), under a comment that says how the page was made.
    """
    out = [
        f"<!-- Written by `scripts/experiments.py summarize {task}` from about.md and the run "
        "folders: edit about.md, not this file. -->",
        "",
    ]
    lines = template.splitlines()
    skip_blank = False
    for line in lines:
        match = INSERT.match(line.strip())
        if match:
            name = match.group(1)
            if name not in sections:
                known = ", ".join(sorted(sections))
                raise ValueError(f"about.md inserts {name!r}; the {task} summary has: {known}")
            text = sections[name].rstrip("\n")
            if text:
                out.append(text)
            skip_blank = not text
            continue
        if skip_blank and not line.strip():
            skip_blank = False
            continue
        skip_blank = False
        out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


def summarize(task: str, runs: Path) -> Summary:
    """The summary of `task` made from the run folders under `runs`."""
    if task == "listops":
        return summarize_listops(runs)
    if task == "snli":
        return summarize_snli(runs)
    if task == "snli_attention":
        return summarize_snli_attention(runs)
    if task in ("sst", "sick"):
        return summarize_seeded(task, runs)
    if task == "parsing":
        return summarize_parsing(runs)
    raise ValueError(f"no summary for task {task!r}")


def write_summary(task: str, runs: Path, out: Path) -> Summary:
    """Writes `out/table.md` and `out/summary.json` (where the task has them) and the results
    page `out/README.md`: from `runs/about.md` when there is one, else a plain page of the
    tables."""
    summary = summarize(task, runs)
    out.mkdir(parents=True, exist_ok=True)
    if task == "listops" and summary.data is not None and summary.data["models"]:
        plot_listops_curves(summary.data, out / "dev_curves.png")
    if "table" in summary.sections:
        (out / "table.md").write_text(summary.sections["table"])
    if summary.data is not None:
        (out / "summary.json").write_text(summary.json_text(summary.data))
    about = runs / "about.md"
    template = about.read_text() if about.exists() else DEFAULT_PAGE.format(task=task)
    (out / "README.md").write_text(results_page(task, template, summary.sections))
    return summary
