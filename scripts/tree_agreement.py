"""How close induced trees are to the gold ones, to trivial trees, and to each other across seeds.

    .venv/bin/python scripts/tree_agreement.py --gold data/listops/test_d20s.tsv.gz \\
        --keys tree --out results/listops/latent_trees \\
        gumbel/1=runs/gumbel_s1.predictions.jsonl gumbel/2=... reinforce/1=...

    .venv/bin/python scripts/tree_agreement.py --gold data/snli/snli_1.0_test.jsonl.gz \\
        --gold-keys sentence1_binary_parse,sentence2_binary_parse \\
        --keys premise_tree,hypothesis_tree --out results/snli/latent_trees \\
        model4/1=model4_s1.predictions.jsonl model4/2=...

Each ``NAME=FILE`` is the output of ``allennlp predict ARCHIVE GOLD_FILE`` (one JSON object per
input line, in order; for ListOps add ``--use-dataset-reader``). A name ``GROUP/SEED`` puts runs
in a group: a group of two or more runs gets its **self-agreement**, the unlabeled bracket F1 of
each run's trees against each other run's, averaged over the pairs (Williams et al. 2018 found
the latent trees of RL-SPINN and ST-Gumbel on SNLI inconsistent across seeds by this measure).

``--gold``: the gold trees. A ``.jsonl`` file (or ``.jsonl.gz``) gives them under
``--gold-keys`` (SNLI's binary parses); a ``.tsv`` file (or ``.tsv.gz``) is ListOps's
``label<TAB>tree`` lines. Several keys (premise and hypothesis) pool their sentences.

Each run is scored against gold (``tools/parse_quality.py``: corpus-level F1 over
constituents of two or more words other than the whole sentence, the mean of per-sentence F1,
exact trees) and by the share of its trees of three or more words that are exactly left- or
right-branching, beside the balanced, left- and right-branching trees of the same sentences. A
tree whose words differ from the gold sentence's is an error naming the line: the files are not
of the same inputs. Writes ``<out>.json`` and ``<out>.md``.
"""

import argparse
import gzip
import itertools
import json
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

# The repository root on the path: the lab code in tools/ is not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spinn_core.transitions import (
    FIXED_SHAPES,
    SHIFT,
    left_branching_transitions,
    parse_to_transitions,
    right_branching_transitions,
)
from tools.parse_quality import ParseQuality  # noqa: E402

Tree = Tuple[List[str], List[int]]  # words, transitions


def read_lines(path: Path) -> List[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.strip()]


def parse(tree: str, where: str) -> Tree:
    try:
        return parse_to_transitions(tree)
    except Exception as error:  # the parser's own errors say what is wrong with the tree
        raise ValueError(f"{where}: not a binary tree: {error}") from error


def read_gold(path: Path, keys: Sequence[str]) -> List[List[Tree]]:
    """Per input line, the gold tree under each key (ListOps TSV: the one tree)."""
    lines = read_lines(path)
    if ".tsv" in path.suffixes:
        return [[parse(line.split("\t")[-1], f"{path}:{n}")] for n, line in enumerate(lines, 1)]
    rows = []
    for number, line in enumerate(lines, 1):
        example = json.loads(line)
        rows.append([parse(example[key], f"{path}:{number} {key}") for key in keys])
    return rows


def read_predictions(path: Path, keys: Sequence[str], gold: List[List[Tree]]) -> List[List[int]]:
    """The transitions of each predicted tree, pooled over ``keys`` in gold's order."""
    lines = read_lines(path)
    if len(lines) != len(gold):
        raise ValueError(f"{path}: {len(lines)} predictions for {len(gold)} gold lines")
    pooled = []
    for number, (line, gold_trees) in enumerate(zip(lines, gold), 1):
        output = json.loads(line)
        for key, (gold_words, _) in zip(keys, gold_trees):
            if key not in output:
                raise ValueError(f"{path}:{number}: no {key!r} (it has {sorted(output)})")
            words, transitions = parse(output[key], f"{path}:{number} {key}")
            if words != gold_words:
                raise ValueError(
                    f"{path}:{number} {key}: the tree's words {words[:8]}... are not the gold "
                    f"sentence's {gold_words[:8]}...: predictions of other inputs?"
                )
            pooled.append(transitions)
    return pooled


def score(predicted: Sequence[List[int]], reference: Sequence[List[int]]) -> Dict[str, float]:
    quality = ParseQuality()
    for tree, gold in zip(predicted, reference):
        quality.add(gold, tree)
    return {**quality.as_dict(), **trivial_shares(predicted)}


def trivial_shares(trees: Sequence[List[int]]) -> Dict[str, float]:
    """The share of the trees of three or more words (below that every tree is both) that are
    exactly left-branching, and exactly right-branching: whether a parser settled on one."""
    left = right = sentences = 0
    for tree in trees:
        words = sum(1 for t in tree if t == SHIFT)
        if words >= 3:
            sentences += 1
            left += int(list(tree) == left_branching_transitions(words))
            right += int(list(tree) == right_branching_transitions(words))
    return {
        "left_branching_rate": left / sentences if sentences else 0.0,
        "right_branching_rate": right / sentences if sentences else 0.0,
    }


def agreement(runs: Dict[str, List[List[int]]]) -> Dict[str, Dict[str, float]]:
    """Per group of two or more runs (names ``GROUP/SEED``): bracket F1 of each pair of runs."""
    groups: Dict[str, List[str]] = {}
    for name in runs:
        groups.setdefault(name.split("/")[0], []).append(name)
    result = {}
    for group, names in groups.items():
        if len(names) < 2:
            continue
        pairs = {
            f"{a} vs {b}": score(runs[a], runs[b])["bracket_f1"]
            for a, b in itertools.combinations(names, 2)
        }
        values = list(pairs.values())
        result[group] = {"runs": len(names), "mean_f1": statistics.mean(values), "pairs": pairs}
    return result


def table(report: Dict) -> str:
    runs = ", ".join(f"`{name}` ({Path(path).name})" for name, path in report["runs"].items())
    rows = [
        f"Trees against the gold trees of `{report['gold']}` (unlabeled brackets, "
        "tools/parse_quality.py), written by `scripts/tree_agreement.py`; "
        f"predictions: {runs}.",
        "",
        "| trees | sentences | bracket F1 | sentence-mean F1 | exact trees "
        "| exactly left-branching | exactly right-branching |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, scores in report["against_gold"].items():
        rows.append(
            f"| {name} | {scores['sentences']} | {100 * scores['bracket_f1']:.1f} | "
            f"{100 * scores['sentence_mean_f1']:.1f} | {100 * scores['exact_tree_rate']:.1f} % | "
            f"{100 * scores['left_branching_rate']:.1f} % | "
            f"{100 * scores['right_branching_rate']:.1f} % |"
        )
    if report["self_agreement"]:
        rows += [
            "",
            "| group | runs | self-agreement (mean pairwise bracket F1) | pairs |",
            "|---|---:|---:|---|",
        ]
        for group, entry in report["self_agreement"].items():
            pairs = "; ".join(f"{pair}: {100 * f1:.1f}" for pair, f1 in entry["pairs"].items())
            rows.append(f"| {group} | {entry['runs']} | {100 * entry['mean_f1']:.1f} | {pairs} |")
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] = None) -> Dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=PREDICTIONS.jsonl (NAME: GROUP/SEED)")
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--gold-keys", default="", help="comma-separated, for a .jsonl gold")
    parser.add_argument("--keys", required=True, help="the predictions' tree keys, in order")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    args = parser.parse_args(argv)

    keys = args.keys.split(",")
    gold_keys = args.gold_keys.split(",") if args.gold_keys else []
    if ".tsv" not in args.gold.suffixes and len(gold_keys) != len(keys):
        parser.error("--gold-keys must name one gold tree per --keys entry")
    if ".tsv" in args.gold.suffixes and len(keys) != 1:
        parser.error("a ListOps .tsv gold has one tree per line: give one --keys entry")
    gold = read_gold(args.gold, gold_keys)
    reference = [transitions for trees in gold for _, transitions in trees]
    lengths = [len(words) for trees in gold for words, _ in trees]

    runs = {}
    for spec in args.runs:
        name, _, path = spec.partition("=")
        if not path:
            parser.error(f"{spec!r}: expected NAME=FILE")
        runs[name] = read_predictions(Path(path), keys, gold)

    against_gold = {name: score(trees, reference) for name, trees in runs.items()}
    for name, tree_of in FIXED_SHAPES.items():
        against_gold[name] = score([tree_of(n) for n in lengths], reference)
    report = {
        "gold": str(args.gold),
        "runs": {name: spec.partition("=")[2] for name, spec in zip(runs, args.runs)},
        "against_gold": against_gold,
        "self_agreement": agreement(runs),
    }
    write_report(report, table(report), args.out)
    return report


def write_report(report: Dict, markdown: str, out: Path) -> None:
    """``out.json`` (the report) and ``out.md`` (its table), and the table on stdout."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown)
    print(markdown)


if __name__ == "__main__":
    main()
