"""`summarize listops`: the ListOps table (all test lines and the ≤ 100 / > 100 token buckets),
the per-run table and the dev curves' plot."""

import gzip
import json
import statistics
from pathlib import Path
from typing import Dict

from experiment_pipeline.common import ROOT
from experiment_pipeline.run_folders import parameters, run_epochs, training_seconds
from experiment_pipeline.tables import (
    Summary,
    cell,
    in_progress,
    known_order,
    machine_record,
    markdown,
    percent,
    seed_groups,
    table_rows,
)
from spinn_core.transitions import FIXED_SHAPES, parse_to_transitions
from spinn_core.tree_scores import bracket_f1

LISTOPS_NAMES = {
    "spinn_pi_nt": "SPINN-PI-NT, gold trees (Model 0: a TreeLSTM)",
    "lstm": "LSTM",
    # `lstm` with the learning rate never halved (reduce_on_plateau patience 1000) and early
    # stopping's patience 25: a try at the LSTM anchor.
    "lstm_constant_lr": "LSTM, learning rate kept constant",
    # The same with dropout 0.2 on the sentence vector and the MLP's output (`model.dropout`).
    "lstm_dropout": "LSTM, learning rate constant, dropout 0.2",
    # The same, the first setting of issue 47's sweep (scripts/jobs/lstm_sweep.tsv).
    "lstm_sweep_dropout": "LSTM, learning rate constant, dropout 0.2",
    "lstm_sweep_dropout_h256": "LSTM 256-d, learning rate constant, dropout 0.2",
    "lstm_sweep_dropout_bidirectional": "BiLSTM, learning rate constant, dropout 0.2",
    "lstm_sweep_dropout_lr2e-3": "LSTM, learning rate 2e-3 constant, dropout 0.2",
    "spinn_pi_nt_balanced": "SPINN-PI-NT, balanced trees",
    "spinn": "full SPINN (Model 1)",
    "spinn_model2": "Model 2 (own transitions, scheduled)",
    "spinn_model3": "Model 3 (soft stack, supervised)",
    "spinn_model4": "Model 4 (soft stack, latent trees)",
    "spinn_best_draw": "best-draw parser (trained by the task alone, 4 trees ranked)",
    # Issue 59's recipe (listops_spinn_beam_best_tree): a beam of 5 trees mixed by their summed
    # log-probabilities, the tree that explains the label best as the parser's target.
    "beam_best_tree": "beam parser (label only, K = 5, the best tree as target)",
    # The same with the gated recursive cell (listops_spinn_beam_best_tree_grc).
    "beam_best_tree_grc": "beam parser with the GRC (label only, K = 5, the best tree as target)",
    "spinn_reinforce": "REINFORCE parser (latent trees)",
    "spinn_soft_annealed": "soft stack, annealed (latent trees)",
    "spinn_gumbel": "straight-through Gumbel (latent trees)",
    "spinn_summaries": "Model 1 + stack/buffer summaries",
}


LISTOPS_TEST = ROOT / "data" / "listops" / "test_d20s.tsv.gz"


# The test accuracy columns: all lines, then the length buckets of the ListOps configs.
LISTOPS_ACCURACY = (
    ("accuracy", "test acc."),
    ("accuracy_tokens_le_100", "≤ 100 tokens"),
    ("accuracy_tokens_gt_100", "> 100 tokens"),
)


def fixed_tree_f1(test: Path = LISTOPS_TEST) -> Dict[str, float]:
    """Mean sentence bracket F1 of balanced / left- / right-branching trees against the gold
    trees of the ListOps test set."""
    sums = {name: [0.0, 0] for name in FIXED_SHAPES}
    with gzip.open(test, "rt", encoding="utf-8") as lines:
        for line in lines:
            tokens, gold = parse_to_transitions(line.rstrip("\n").split("\t")[1])
            for name, shape in FIXED_SHAPES.items():
                f1 = bracket_f1(shape(len(tokens)), gold)
                if f1 is not None:
                    sums[name][0] += f1
                    sums[name][1] += 1
    return {name: total / count for name, (total, count) in sums.items()}


def listops_run_record(run: Path) -> Dict:
    metrics = json.loads((run / "metrics.json").read_text())
    epochs = run_epochs(run)
    seconds = training_seconds(run, metrics)
    return machine_record(
        run,
        {
            "params": parameters(run, "trainable"),
            "epochs": metrics["epoch"] + 1,
            "best_epoch": metrics["best_epoch"],
            "dev_accuracy": metrics["best_validation_accuracy"],
            "test": json.loads((run / "test_metrics.json").read_text()),
            "train_wall_seconds": seconds,
            "dev_curve": [epoch["validation_accuracy"] for epoch in epochs],
        },
    )


def summarize_listops(runs: Path) -> Summary:
    """One row per model (runs `<model>` and `<model>_s<seed>`) with the mean ± standard
    deviation over its seeds of the test accuracy on all lines and on the <= 100 / > 100 token
    buckets, the trees' bracket F1 (models with a parser), the best dev accuracy, epochs, and
    the wall time per run and per epoch; then one row per run; the bracket F1 of fixed trees
    below. `summary.json` keeps each run's dev accuracy per epoch (`dev_curve`), which
    `plot_listops_curves` draws."""
    groups = seed_groups(runs)
    records = {
        name: {run.name: listops_run_record(run) for run in groups[name]}
        for name in known_order(list(groups), LISTOPS_NAMES)
    }
    model_rows, run_rows = [], []
    for name, by_run in records.items():
        tests = [record["test"] for record in by_run.values()]
        row = [LISTOPS_NAMES.get(name, name), str(len(by_run))]
        row += [cell([test[key] for test in tests], 100) for key, _ in LISTOPS_ACCURACY]
        f1 = [test["bracket_f1"] for test in tests if "bracket_f1" in test]
        row.append(cell(f1, 100) if len(f1) == len(tests) else "—")
        row.append(cell([record["dev_accuracy"] for record in by_run.values()], 100))
        row.append(", ".join(f"{r['epochs']} ({r['best_epoch'] + 1})" for r in by_run.values()))
        minutes = [r["train_wall_seconds"] / 60 for r in by_run.values()]
        per_epoch = [r["train_wall_seconds"] / r["epochs"] for r in by_run.values()]
        row.append(f"{statistics.mean(minutes):.0f} min")
        row.append(f"{statistics.mean(per_epoch):.0f} s")
        model_rows.append(row)
        for run_name, record in by_run.items():
            test = record["test"]
            load = record.get("machine", {}).get("load_mean")
            run_rows.append(
                [run_name]
                + [percent(test.get(key)) for key, _ in LISTOPS_ACCURACY]
                + [
                    percent(test.get("bracket_f1")),
                    f"{record['epochs']} ({record['best_epoch'] + 1})",
                    f"{record['train_wall_seconds'] / 60:.0f} min",
                    "—" if load is None else f"{load:.1f}",
                ]
            )
    header = ["model", "seeds"] + [title for _, title in LISTOPS_ACCURACY]
    header += ["bracket F1", "dev acc.", "epochs (best)", "time / run", "time / epoch"]
    lines = table_rows(header, "|---|---:|" + "---:|" * (len(header) - 2), model_rows)
    shapes = fixed_tree_f1()
    lines += [
        "",
        "Bracket F1 of fixed trees against the gold test trees: "
        + ", ".join(f"{name} {percent(f1)}" for name, f1 in shapes.items()),
    ]
    run_header = ["run"] + [title for _, title in LISTOPS_ACCURACY]
    run_header += ["bracket F1", "epochs (best)", "train wall time", "load"]
    per_run = table_rows(run_header, "|---|" + "---:|" * (len(run_header) - 1), run_rows)
    return Summary(
        {
            "table": markdown(lines),
            "runs": markdown(per_run),
            "in_progress": in_progress(runs, "accuracy"),
        },
        {"models": records, "fixed_tree_f1": shapes},
        lambda data: json.dumps(data, indent=1) + "\n",
    )


def plot_listops_curves(data: Dict, path: Path) -> None:
    """Dev accuracy per epoch of every ListOps run, one colour per model (a line per seed):
    writes `path` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5))
    colours = plt.get_cmap("tab10")
    for index, (name, by_run) in enumerate(data["models"].items()):
        for seed, record in enumerate(by_run.values()):
            curve = record["dev_curve"]
            axes.plot(
                range(1, len(curve) + 1),
                [100 * value for value in curve],
                color=colours(index % 10),
                linewidth=1,
                label=LISTOPS_NAMES.get(name, name) if seed == 0 else None,
            )
    axes.set_xlabel("epoch")
    axes.set_ylabel("dev accuracy (%)")
    axes.set_title("ListOps: dev accuracy per epoch (one line per run)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)
