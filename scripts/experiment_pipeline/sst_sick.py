"""`summarize sst` and `summarize sick`: the tree tasks' tables, by model and seed."""

import json
import statistics
from pathlib import Path
from typing import Dict, List

from experiment_pipeline.common import read_json
from experiment_pipeline.run_folders import training_seconds
from experiment_pipeline.tables import Summary, cell, in_progress, markdown, seed_groups, table_rows

TREE_COLUMNS = {
    "sst": [
        ("root_accuracy", "test root acc.", 100),
        ("phrase_accuracy", "test all-phrase acc.", 100),
    ],
    "sick": [
        ("pearson", "test Pearson r", 1),
        ("spearman", "test Spearman ρ", 1),
        ("mse", "test MSE", 1),
    ],
}


TREE_VALIDATION = {"sst": ("root_accuracy", 100), "sick": ("pearson", 1)}
SST_ENCODERS = {
    "spinn_pi_nt": "SPINN-PI-NT = constituency Tree-LSTM (gold trees)",
    "spinn_pi": "SPINN-PI (tracking LSTM, gold trees)",
    "spinn": "full SPINN (parser learns SST's trees; own parse at test)",
    "child_sum": "Child-Sum Tree-LSTM (head-rule dependency trees)",
    "lstm": "AllenNLP LSTM (root label only)",
    "bilstm": "AllenNLP BiLSTM (root label only)",
}


SICK_ROWS = {
    "spinn_pi_nt_benepar": ("SPINN-PI-NT (binary constituency Tree-LSTM)", "benepar (ours)"),
    "spinn_pi_nt_spinn": ("SPINN-PI-NT", "SPINN's parser"),
    "spinn_pi_nt_balanced": ("SPINN-PI-NT", "balanced"),
    "child_sum_benepar": ("Child-Sum Tree-LSTM (dependency)", "benepar → head rules"),
    "child_sum_balanced": ("Child-Sum Tree-LSTM", "balanced → head rules"),
    "lstm_balanced": ("AllenNLP LSTM", "— (no trees)"),
}


def summarize_seeded(task: str, runs: Path) -> Summary:
    """SST or SICK: one row per model (runs named `<row>_s<seed>`) with the mean and standard
    deviation over its seeds, each seed's value, the selection metric on the validation set,
    best epochs and the mean wall time; then the page's view by model (`by_model`)."""
    columns = TREE_COLUMNS[task]
    validation_key, validation_scale = TREE_VALIDATION[task]
    first_key, _, first_scale = columns[0]
    digits = 1 if first_scale == 100 else 4
    header = ["run", "seeds"] + [title for _, title, _ in columns]
    header += [f"dev {validation_key}", "per seed (first test column)", "best epoch"]
    header += ["wall time / run"]
    rows, data = [], {}
    groups = seed_groups(runs)
    for name, group in groups.items():
        tests = [json.loads((run / "test_metrics.json").read_text()) for run in group]
        trains = [json.loads((run / "metrics.json").read_text()) for run in group]
        seconds = [training_seconds(run, m) for run, m in zip(group, trains)]
        row = [name, str(len(group))]
        # A metric the model has not (the LSTM baselines label only the root): "—".
        row += [
            cell([t[key] for t in tests], scale) if all(key in t for t in tests) else "—"
            for key, _, scale in columns
        ]
        row.append(cell([m[f"best_validation_{validation_key}"] for m in trains], validation_scale))
        row.append(" / ".join(f"{t[first_key] * first_scale:.{digits}f}" for t in tests))
        row.append(", ".join(str(m["best_epoch"] + 1) for m in trains))
        row.append(f"{statistics.mean(seconds) / 60:.0f} min")
        rows.append(row)
        record = {
            "runs": [run.name for run in group],
            "test": tests,
            "best_validation": [m[f"best_validation_{validation_key}"] for m in trains],
            "best_epoch": [m["best_epoch"] for m in trains],
            "training_seconds": seconds,
        }
        machines = [read_json(run / "machine.json") for run in group]
        if any(machine is not None for machine in machines):
            record["machine"] = machines
        data[name] = record
    align = "|" + "---|" + "---:|" * (len(header) - 1)
    sections = {"table": markdown(table_rows(header, align, rows))}
    sections["in_progress"] = in_progress(runs, validation_key)
    view = sst_by_model(groups) if task == "sst" else sick_by_model(groups)
    sections["by_model"] = markdown(view) if len(view) > 2 else ""
    return Summary(sections, data)


def group_tests(group: List[Path]) -> List[Dict]:
    return [json.loads((run / "test_metrics.json").read_text()) for run in group]


def sst_by_model(groups: Dict[str, List[Path]]) -> List[str]:
    """One row per encoder, fine-grained and binary side by side (mean ± standard deviation over
    seeds), each seed's root accuracy."""
    encoders = {
        name.split("_", 1)[1] for name in groups if name.split("_", 1)[0] in ("fine", "binary")
    }
    order = {name: position for position, name in enumerate(SST_ENCODERS)}
    rows = []
    for encoder in sorted(encoders, key=lambda e: (order.get(e, len(order)), e)):
        settings = [group_tests(groups.get(f"{s}_{encoder}", [])) for s in ("fine", "binary")]
        counts = sorted({len(tests) for tests in settings if tests})
        row = [SST_ENCODERS.get(encoder, encoder), " / ".join(str(c) for c in counts)]
        for tests in settings:
            for key in ("root_accuracy", "phrase_accuracy"):
                present = tests and all(key in t for t in tests)
                row.append(cell([t[key] for t in tests], 100) if present else "—")
        per_seed = [" / ".join(f"{100 * t['root_accuracy']:.1f}" for t in s) for s in settings]
        row.append(" ; ".join(seeds for seeds in per_seed if seeds))
        rows.append(row)
    header = ["model", "seeds", "fine: test root", "fine: all-phrase", "binary: test root"]
    header += ["binary: all-phrase", "per seed (test root, fine / binary)"]
    return table_rows(header, "|---|---:|---:|---:|---:|---:|---|", rows)


def sick_by_model(groups: Dict[str, List[Path]]) -> List[str]:
    """One row per model and tree source (mean ± standard deviation over seeds)."""
    order = {name: position for position, name in enumerate(SICK_ROWS)}
    rows = []
    for name in sorted(groups, key=lambda n: (order.get(n, len(order)), n)):
        tests = group_tests(groups[name])
        model, source = SICK_ROWS.get(name, (name, ""))
        row = [model, source]
        row += [cell([t[key] for t in tests], 1) for key in ("pearson", "spearman", "mse")]
        row.append(" / ".join(f"{t['pearson']:.4f}" for t in tests))
        rows.append(row)
    header = ["SICK test", "tree source", "Pearson r", "Spearman ρ", "MSE", "per seed (r)"]
    return table_rows(header, "|---|---|---:|---:|---:|---:|", rows)
