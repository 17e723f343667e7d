"""`summarize snli` and `summarize snli_attention`: the SNLI tables."""

import json
import re
import statistics
from pathlib import Path
from typing import Any, Dict, List, Optional

from experiment_pipeline.common import read_json
from experiment_pipeline.run_folders import parameters, training_seconds
from experiment_pipeline.tables import (
    Summary,
    in_progress,
    machine_record,
    markdown,
    percent,
    table_rows,
)

SNLI_NAMES = {
    "lstm": "LSTM RNN",
    "spinn_pi_nt": "SPINN-PI-NT",
    "spinn_pi": "SPINN-PI",
    "spinn": "SPINN (own parser at test)",
    "spinn_model2": "Model 2: own transitions (scheduled)",
    "spinn_model3": "Model 3: soft stack, supervised",
    "spinn_model4": "Model 4: soft stack, latent trees",
    "spinn_reinforce": "REINFORCE parser, latent trees",
    "spinn_gumbel": "straight-through Gumbel parser, latent trees",
    "spinn_soft_annealed": "soft stack annealed to choose, latent trees",
    "spinn_ppo": "PPO parser, latent trees",
    "spinn_best_draw": "best-draw parser (4 trees a sentence), latent trees",
    "spinn_beam_best_tree": "beam-trained parser (5 trees a sentence, best_tree), latent trees",
    # The same with the gated recursive cell (pair_classification/spinn_beam_best_tree_grc).
    "spinn_beam_best_tree_grc": (
        "beam-trained parser with the GRC (5 trees a sentence, best_tree), latent trees"
    ),
    "spinn_typed": "SPINN, typed REDUCE",
}


# Chen et al. (2017); "him" is made from the esim and tree_esim runs of the same seed.
ATTENTION_NAMES = {
    "esim": "ESIM",
    "tree_esim": "syntactic tree-LSTM",
    "him": "HIM (ESIM + tree, probabilities averaged)",
}


def snli_variant(run: Path) -> str:
    return re.sub(r"_seed\d+$", "", run.name)


def snli_seed(run: Path) -> str:
    return run.name.split("_seed")[1] if "_seed" in run.name else "config's"


def snli_runs(runs: Path, names: Dict[str, str], attention: bool) -> List[Path]:
    """The test-evaluated runs of the SNLI page (`attention`: of the attention page), grouped by
    variant in the order of `names`, each variant's runs the config's seed first, then
    `_seed<N>` in order of N; variants not in `names` follow (on the SNLI page)."""
    found = [run for run in runs.iterdir() if (run / "test_metrics.json").exists()]
    found = [run for run in found if (snli_variant(run) in ATTENTION_NAMES) == attention]
    order = {name: position for position, name in enumerate(names)}
    return sorted(
        found,
        key=lambda run: (
            order.get(snli_variant(run), len(order)),
            snli_variant(run),
            -1 if "_seed" not in run.name else int(run.name.split("_seed")[1]),
        ),
    )


def bracket_f1_cell(test: Dict) -> str:
    """Unlabeled bracket F1, and the labeled one for typed REDUCE."""
    cell = percent(test.get("bracket_f1"))
    if "labeled_bracket_f1" in test:
        cell += f" (labeled {percent(test['labeled_bracket_f1'])})"
    return cell


def snli_record(run: Path, metrics: Optional[Dict], test: Dict, params: int) -> Dict:
    record: Dict[str, Any] = {"params_excluding_embeddings": params}
    if metrics is not None:
        record.update(
            epochs=metrics["epoch"] + 1,
            best_epoch=metrics["best_epoch"],
            dev_accuracy=metrics["best_validation_accuracy"],
            train_wall_seconds=training_seconds(run, metrics),
        )
    return machine_record(run, {**record, "test": test})


def summarize_snli(runs: Path) -> Summary:
    """One row per run (the configs' seeds, then each _seed<N>), then each model's mean and
    spread over its runs."""
    rows, data = [], {}
    test_accuracies: Dict[str, List[float]] = {}
    for run in snli_runs(runs, SNLI_NAMES, attention=False):
        name = SNLI_NAMES.get(snli_variant(run), snli_variant(run))
        metrics = read_json(run / "metrics.json")
        if metrics is None:
            continue
        test = json.loads((run / "test_metrics.json").read_text())
        params = parameters(run, "trainable_excluding_embedder")
        test_accuracies.setdefault(name, []).append(test["accuracy"])
        data[run.name] = snli_record(run, metrics, test, params)
        rows.append(
            [
                name,
                snli_seed(run),
                f"{params / 1e6:.2f}M",
                str(metrics["best_epoch"]),
                percent(metrics["best_validation_accuracy"]),
                percent(test["accuracy"]),
                percent(test.get("transition_accuracy")),
                percent(test.get("tree_accuracy")),
                percent(test.get("valid_tree_rate")),
                bracket_f1_cell(test),
                f"{training_seconds(run, metrics) / 60:.1f} min ({metrics['epoch'] + 1} epochs)",
            ]
        )
    header = ["model", "seed", "params (excl. embeddings)", "best epoch", "dev acc."]
    header += ["test acc.", "test trans. acc.", "test tree acc.", "test valid trees"]
    header += ["test bracket F1", "train wall time"]
    lines = table_rows(header, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", rows)
    means = []
    for name, values in test_accuracies.items():
        spread = percent(statistics.stdev(values)) if len(values) > 1 else "—"
        spans = f"{percent(min(values))} – {percent(max(values))}"
        means.append([name, str(len(values)), percent(statistics.mean(values)), spread, spans])
    header = ["model", "runs", "test acc. mean", "standard deviation", "min – max"]
    lines += [""] + table_rows(header, "|---|---:|---:|---:|---:|", means)
    # A blank line ends the table, as in the committed table.md (the earlier script printed one
    # between this table and the attention models').
    return Summary(
        {"table": markdown(lines + [""]), "in_progress": in_progress(runs, "accuracy")},
        {"runs": data},
    )


def summarize_snli_attention(runs: Path) -> Summary:
    """ESIM, the syntactic tree-LSTM model and HIM: one row per run, then each model's mean."""
    rows, data = [], {}
    test_accuracies: Dict[str, List[float]] = {}
    for run in snli_runs(runs, ATTENTION_NAMES, attention=True):
        variant = snli_variant(run)
        name = ATTENTION_NAMES[variant]
        test = json.loads((run / "test_metrics.json").read_text())
        test_accuracies.setdefault(name, []).append(test["accuracy"])
        metrics = read_json(run / "metrics.json")
        params = parameters(run, "trainable_excluding_embedder")
        if variant == "him":
            dev = read_json(run / "dev_metrics.json")
            dev_accuracy: Optional[float] = None if dev is None else dev["accuracy"]
            epoch, wall = "—", "(members')"
            members = " / ".join(
                percent(test[key]) for key in ("esim_accuracy", "tree_accuracy", "oracle_accuracy")
            )
            data[run.name] = snli_record(run, None, test, params)
            data[run.name]["dev_accuracy"] = dev_accuracy
        else:
            assert metrics is not None, f"{run}: no metrics.json"
            epoch = str(metrics["best_epoch"])
            dev_accuracy = metrics["best_validation_accuracy"]
            minutes = training_seconds(run, metrics) / 60
            wall = f"{minutes:.1f} min ({metrics['epoch'] + 1} epochs)"
            members = "—"
            data[run.name] = snli_record(run, metrics, test, params)
        rows.append(
            [
                name,
                snli_seed(run),
                f"{params / 1e6:.2f}M",
                epoch,
                percent(dev_accuracy),
                percent(test["accuracy"]),
                members,
                wall,
            ]
        )
    header = ["model", "seed", "params (excl. embeddings)", "best epoch", "dev acc.", "test acc."]
    header += ["test: ESIM / tree / either right", "train wall time"]
    lines = table_rows(header, "|---|---|---:|---:|---:|---:|---:|---:|", rows)
    means = [
        [
            name,
            str(len(values)),
            percent(statistics.mean(values)),
            f"{percent(min(values))} – {percent(max(values))}",
        ]
        for name, values in test_accuracies.items()
    ]
    header = ["model", "runs", "test acc. mean", "min – max"]
    lines += [""] + table_rows(header, "|---|---:|---:|---:|", means)
    return Summary(
        {"table": markdown(lines), "in_progress": in_progress(runs, "accuracy")}, {"runs": data}
    )
