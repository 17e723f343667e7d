"""`summarize parsing`: the tree sources' table (scripts/evaluate_tree_sources.py's runs)."""

import json
from pathlib import Path

from experiment_pipeline.tables import Summary, markdown, percent, table_rows

# The benepar training runs of results/parsing/benepar/, in this order (others after, by name).
BENEPAR_RUNS = (
    "pilot_nary",
    "pilot_binarized",
    "pilot_nary_sst",
    "pilot_binarized_sst",
    "benepar_snli_1pct",
    "benepar_snli_sst",
)


def benepar_runs(folder: Path) -> str:
    """One row per benepar training run (scripts/train_benepar.py's metrics JSON in `folder`):
    what it learned from, how long, and its dev checks' scores at the end (labeled F1 on all of
    SNLI dev; unlabeled bracket F1 of the binarized trees on SNLI dev and the SST train
    sentences held out; "—" where the run did not measure it)."""
    order = {name: position for position, name in enumerate(BENEPAR_RUNS)}
    paths = sorted(
        folder.glob("*.metrics.json"),
        key=lambda p: (order.get(p.name[: -len(".metrics.json")], len(order)), p.name),
    )
    rows = []
    for path in paths:
        metrics = json.loads(path.read_text())
        unlabeled = metrics.get("unlabeled", {})
        sst = metrics.get("sst_train_sentences", 0)
        rows.append(
            [
                f"`{path.name[: -len('.metrics.json')]}`",
                "binarized" if metrics.get("binarized_snli") else "n-ary",
                f"{sst:,}" if sst else "—",
                f"{metrics['steps']:,} ({metrics['epochs']:.1f})",
                f"{metrics['train_minutes']:.0f}",
                percent(metrics["dev"]["f1"]),
                percent(unlabeled["snli_dev"]["bracket_f1"]) if "snli_dev" in unlabeled else "—",
                (
                    percent(unlabeled["sst_holdout"]["bracket_f1"])
                    if "sst_holdout" in unlabeled
                    else "—"
                ),
            ]
        )
    header = ["run", "SNLI trees", "SST train trees", "steps (epochs)", "minutes"]
    header += ["SNLI dev: labeled F1", "SNLI dev: unlabeled F1", "SST held out: unlabeled F1"]
    return markdown(table_rows(header, "|---|---|---:|---:|---:|---:|---:|---:|", rows))


def summarize_parsing(runs: Path) -> Summary:
    """The tables scripts/evaluate_tree_sources.py wrote (parse_quality.md, downstream.md,
    out_of_domain.md), and the benepar training runs' table (`benepar_runs`, from
    `benepar/*.metrics.json`), for the page; no summary of its own."""
    sections = {
        path.stem: path.read_text()
        for path in sorted(runs.glob("*.md"))
        if path.name not in ("README.md", "about.md")
    }
    if (runs / "benepar").is_dir():
        sections["benepar_runs"] = benepar_runs(runs / "benepar")
    return Summary(sections, None)
