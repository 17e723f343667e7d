"""How good is each tree source, and does it matter downstream?

    .venv/bin/python scripts/evaluate_tree_sources.py \\
        --spinn-archive runs/snli/spinn/model.tar.gz \\
        --downstream runs/snli/spinn_pi_nt/model.tar.gz runs/snli/spinn_pi/model.tar.gz \\
        --out runs/parsing

(`runs/snli/<variant>`: SNLI runs of `scripts/experiments.py`, as in results/snli/README.md.)
The tables and their JSON (not the trees) are kept in results/parsing/, whose results page
`scripts/experiments.py summarize parsing` writes.

1. **Parse quality**: every sentence of the labelled SNLI test pairs (premise and hypothesis;
   the words of its binary parse) gets a tree from each source (the full SPINN's parser, our
   benepar model, balanced, left- and right-branching; gold itself as a check), compared with
   the gold binary parse (``tools/parse_quality.py`` states the conventions).
   Writes ``parse_quality.json`` / ``.md``, and the trees, ``trees/<source>.jsonl``.
2. **Downstream** (``--downstream``): each archive evaluated on the test pairs with the trees
   of each source put in place of the binary parses (same words, another tree). Writes
   ``downstream.json`` / ``.md``.
3. **Out of domain** (``--out-of-domain``): each benepar model of ``--benepar-models`` and the
   baselines on SNLI test (as in 1.) and on SST dev (``--sst-data``: SST's binary trees, the
   same conventions; SST's tokens go to the tree source as they are), one row per source:

       .venv/bin/python scripts/evaluate_tree_sources.py --out-of-domain \\
           --benepar-models benepar_snli_1pct benepar_snli_sst --out results/parsing

   Writes ``out_of_domain.json`` / ``.md``. SST test stays unseen: nothing here reads it.
4. ``--check-binarization FILE...``: how often the head-outward binarization of SNLI's labeled
   parses gives exactly the corpus's binary parse (and right/left factoring, for comparison).
   Writes ``binarization.json``.

One torch thread by default (``--threads``).
"""

import argparse
import gzip
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import nltk
import torch
from allennlp.common import Params
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.models.archival import load_archive
from allennlp.training.util import evaluate

import spinn_allennlp.plugin  # noqa: F401  (registers the plugin's classes)
from spinn_allennlp.data.binarization import FACTORINGS, binarize
from spinn_allennlp.data.labeled_trees import binary_tree_steps, parse_labeled_tree

# The repository root on the path: the lab code in tools/ is not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spinn_allennlp.data.tree_sources import TreeSource, TreeSourceError
from spinn_allennlp.data.tree_sources.benepar_trees import DEFAULT_MODEL
from spinn_core.transitions import (
    parse_to_transitions,
    transitions_to_string,
    tree_to_string,
)
from tools.parse_quality import ParseQuality  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIDES = (("sentence1", "sentence1_binary_parse"), ("sentence2", "sentence2_binary_parse"))
NAMES = {
    "gold": "gold (the check: SNLI's own binary parses)",
    "spinn": "SPINN's parser (full SPINN)",
    "benepar": "benepar (ours, SNLI 1 % trees)",
    "benepar_snli_1pct": "benepar, SNLI 1 % trees (`benepar_snli_1pct`)",
    "benepar_snli_sst": "benepar, SNLI 1 % trees + SST train bracketing (`benepar_snli_sst`)",
    "balanced": "balanced",
    "left_branching": "left-branching",
    "right_branching": "right-branching",
}


def read_pairs(path: Path, limit: int = 0) -> List[Dict[str, Any]]:
    """The labelled pairs (gold_label not "-") of an SNLI JSONL(.gz) file."""
    opener = gzip.open if str(path).endswith(".gz") else open
    pairs = []
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            example = json.loads(line)
            if example.get("gold_label") in (None, "-"):
                continue
            pairs.append(example)
            if limit and len(pairs) == limit:
                break
    return pairs


def sentences_of(pairs: Sequence[Dict[str, Any]]) -> List[Tuple[Tuple[str, ...], List[int]]]:
    """(tokens, gold transitions) of every premise and hypothesis, in order."""
    out = []
    for pair in pairs:
        for _, parse_key in SIDES:
            tokens, transitions = parse_to_transitions(pair[parse_key])
            out.append((tuple(tokens), transitions))
    return out


def read_sst(path: Path, limit: int = 0) -> List[Tuple[Tuple[str, ...], List[int]]]:
    """(tokens, gold transitions) of every tree of an SST PTB-format file (binary trees; the
    sentiment labels are not needed)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    sentences = []
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            tokens, transitions, _ = binary_tree_steps(parse_labeled_tree(line.strip()))
            sentences.append((tuple(tokens), transitions))
            if limit and len(sentences) == limit:
                break
    return sentences


def make_sources(args) -> Dict[str, TreeSource]:
    sources: Dict[str, Dict[str, Any]] = {}
    gold_files = [str(args.data)]
    sources["gold"] = {"type": "gold", "parse_files": gold_files}
    if args.spinn_archive:
        sources["spinn"] = {"type": "spinn", "archive": str(args.spinn_archive), "batch_size": 128}
    sources["benepar"] = {"type": "benepar", "model": args.benepar_model, "batch_size": 128}
    for name in ("balanced", "left_branching", "right_branching"):
        sources[name] = {"type": name}
    return {name: TreeSource.from_params(Params(params)) for name, params in sources.items()}


def parse_all(
    source: TreeSource, sentences: Sequence[Tuple[str, ...]], chunk: int = 512
) -> Tuple[List[Optional[List[int]]], List[str], float]:
    """Trees of the distinct sentences (None where the source has none), the errors, seconds."""
    start = time.perf_counter()
    trees: List[Optional[List[int]]] = []
    errors: List[str] = []
    for first in range(0, len(sentences), chunk):
        batch = [list(tokens) for tokens in sentences[first : first + chunk]]
        for result in source.transitions_or_errors(batch):
            if isinstance(result, TreeSourceError):
                trees.append(None)
                errors.append(str(result))
            else:
                trees.append(result)
        print(f"  {source.name}: {len(trees)}/{len(sentences)}", file=sys.stderr, flush=True)
    return trees, errors, time.perf_counter() - start


def percent(value: float) -> str:
    return f"{100 * value:.1f}"


def environment(args) -> Dict[str, Any]:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "commit": commit + ("+changes" if dirty else ""),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, CPU only",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "python": platform.python_version(),
    }


Trees = Dict[str, List[Optional[List[int]]]]


def parse_quality(args, out: Path) -> Tuple[List[Dict[str, Any]], List[Tuple[str, ...]], Trees]:
    """Writes the parse-quality table; returns the pairs, the distinct sentences (sorted) and
    each source's trees of them."""
    pairs = read_pairs(args.data, args.limit)
    sentences = sentences_of(pairs)
    distinct = sorted({tokens for tokens, _ in sentences}, key=lambda t: (len(t), t))
    index = {tokens: i for i, tokens in enumerate(distinct)}
    print(
        f"{len(pairs)} pairs, {len(sentences)} sentences, {len(distinct)} distinct",
        file=sys.stderr,
    )
    (out / "trees").mkdir(parents=True, exist_ok=True)
    rows: Dict[str, Any] = {}
    trees_by_source: Trees = {}
    for name, source in make_sources(args).items():
        trees, errors, seconds = parse_all(source, distinct)
        quality = ParseQuality()
        for tokens, gold in sentences:
            quality.add(gold, trees[index[tokens]])
        rows[name] = {
            **quality.as_dict(),
            "distinct_sentences": len(distinct),
            "no_tree": len(errors),
            "first_errors": errors[:5],
            "parse_seconds": seconds,
            "sentences_per_second": len(distinct) / seconds if seconds else None,
        }
        trees_by_source[name] = trees
        with open(out / "trees" / f"{name}.jsonl", "w", encoding="utf-8") as handle:
            for tokens, tree in zip(distinct, trees):
                handle.write(json.dumps({"tokens": list(tokens), "transitions": tree}) + "\n")
        print(f"{name}: {json.dumps(rows[name])}", file=sys.stderr)
    result = {
        **environment(args),
        "data": str(args.data),
        "pairs": len(pairs),
        "spinn_archive": str(args.spinn_archive) if args.spinn_archive else None,
        "benepar_model": args.benepar_model,
        "sources": rows,
    }
    (out / "parse_quality.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "| tree source | unlabeled bracket F1 | sentence-mean F1 | exact trees | valid trees | "
        "transition acc. | parse time (sentences/s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        speed = row["sentences_per_second"]
        lines.append(
            f"| {NAMES.get(name, name)} | {percent(row['bracket_f1'])} | "
            f"{percent(row['sentence_mean_f1'])} | {percent(row['exact_tree_rate'])} | "
            f"{percent(row['valid_tree_rate'])} | {percent(row['transition_accuracy'])} | "
            f"{row['parse_seconds']:.0f} s ({speed:,.0f}) |"
        )
    (out / "parse_quality.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return pairs, distinct, trees_by_source


def quality_of(
    source: TreeSource, sentences: Sequence[Tuple[Tuple[str, ...], List[int]]]
) -> Dict[str, Any]:
    """The source's trees of the distinct sentences, scored against every sentence's gold."""
    distinct = sorted({tokens for tokens, _ in sentences}, key=lambda t: (len(t), t))
    index = {tokens: i for i, tokens in enumerate(distinct)}
    trees, errors, seconds = parse_all(source, distinct)
    quality = ParseQuality()
    for tokens, gold in sentences:
        quality.add(gold, trees[index[tokens]])
    return {
        **quality.as_dict(),
        "distinct_sentences": len(distinct),
        "no_tree": len(errors),
        "first_errors": errors[:5],
        "parse_seconds": seconds,
    }


def out_of_domain(args, out: Path) -> None:
    """SNLI test and SST dev, each benepar model of --benepar-models and the baselines."""
    pairs = read_pairs(args.data, args.limit)
    datasets = {"snli_test": sentences_of(pairs), "sst_dev": read_sst(args.sst_data, args.limit)}
    print(
        ", ".join(f"{name}: {len(sentences)} sentences" for name, sentences in datasets.items()),
        file=sys.stderr,
    )
    sources: Dict[str, Dict[str, Any]] = {
        Path(model).stem: {"type": "benepar", "model": model, "batch_size": 128}
        for model in args.benepar_models
    }
    for name in ("balanced", "left_branching", "right_branching"):
        sources[name] = {"type": name}
    rows: Dict[str, Dict[str, Any]] = {}
    for name, params in sources.items():
        source = TreeSource.from_params(Params(dict(params)))
        rows[name] = {key: quality_of(source, sentences) for key, sentences in datasets.items()}
        print(f"{name}: {json.dumps(rows[name])}", file=sys.stderr)
    result = {
        **environment(args),
        "data": {"snli_test": str(args.data), "sst_dev": str(args.sst_data)},
        "pairs": len(pairs),
        "sentences": {name: len(sentences) for name, sentences in datasets.items()},
        "benepar_models": list(args.benepar_models),
        "sources": rows,
    }
    (out / "out_of_domain.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "| tree source | SNLI test: bracket F1 | SNLI test: exact trees | SST dev: bracket F1 | "
        "SST dev: sentence-mean F1 | SST dev: exact trees | SST dev: transition acc. |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        snli, sst = row["snli_test"], row["sst_dev"]
        lines.append(
            f"| {NAMES.get(name, name)} | {percent(snli['bracket_f1'])} | "
            f"{percent(snli['exact_tree_rate'])} | {percent(sst['bracket_f1'])} | "
            f"{percent(sst['sentence_mean_f1'])} | {percent(sst['exact_tree_rate'])} | "
            f"{percent(sst['transition_accuracy'])} |"
        )
    (out / "out_of_domain.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def downstream(
    args,
    out: Path,
    pairs: List[Dict[str, Any]],
    distinct: List[Tuple[str, ...]],
    trees_by_source: Trees,
) -> None:
    index = {tokens: i for i, tokens in enumerate(distinct)}
    results: Dict[str, Any] = {}
    for archive_path in args.downstream:
        archive = load_archive(str(archive_path), cuda_device=args.cuda_device)
        model, reader = archive.model, archive.validation_dataset_reader
        model.eval()
        name = Path(archive_path).parent.name
        results[name] = {}
        for source in args.downstream_sources:
            trees = trees_by_source[source]
            path = out / f"test_{source}.jsonl"
            kept = 0
            with open(path, "w", encoding="utf-8") as handle:
                for pair in pairs:
                    line = dict(pair)
                    for _, parse_key in SIDES:
                        tokens, _ = parse_to_transitions(pair[parse_key])
                        tree = trees[index[tuple(tokens)]]
                        if tree is None:
                            break
                        line[parse_key] = transitions_to_string(tokens, tree)
                    else:
                        kept += 1
                        handle.write(json.dumps(line) + "\n")
            start = time.perf_counter()
            loader = MultiProcessDataLoader(reader, str(path), batch_size=128)
            loader.index_with(model.vocab)
            metrics = evaluate(model, loader, cuda_device=args.cuda_device)
            seconds = time.perf_counter() - start
            path.unlink()
            results[name][source] = {
                "accuracy": metrics["accuracy"],
                "pairs": kept,
                "pairs_without_trees": len(pairs) - kept,
                "seconds": seconds,
                **{key: value for key, value in metrics.items() if key != "accuracy"},
            }
            print(f"{name} {source}: {results[name][source]}", file=sys.stderr)
    data = {**environment(args), "archives": [str(a) for a in args.downstream], "results": results}
    (out / "downstream.json").write_text(json.dumps(data, indent=1) + "\n")
    header = "| model | " + " | ".join(NAMES[s].split(" (")[0] for s in args.downstream_sources)
    lines = [header + " |", "|---|" + "---:|" * len(args.downstream_sources)]
    for name, row in results.items():
        cells = " | ".join(percent(row[s]["accuracy"]) for s in args.downstream_sources)
        lines.append(f"| {name} | {cells} |")
    (out / "downstream.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def check_binarization(files: Sequence[Path], out: Path) -> None:
    counts = {factor: 0 for factor in FACTORINGS}
    total = 0
    first_misses: List[Dict[str, str]] = []
    for path in files:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                example = json.loads(line)
                for side in ("sentence1", "sentence2"):
                    labeled = nltk.Tree.fromstring(example[f"{side}_parse"])
                    gold = parse_to_transitions(example[f"{side}_binary_parse"])
                    total += 1
                    for factor in FACTORINGS:
                        ours = parse_to_transitions(tree_to_string(binarize(labeled, factor)))
                        hit = ours == gold
                        counts[factor] += hit
                        if factor == "head" and not hit and len(first_misses) < 10:
                            first_misses.append({"parse": example[f"{side}_parse"]})
    result = {
        "files": [str(f) for f in files],
        "parses": total,
        "identical_to_the_binary_parse": {f: counts[f] / total for f in FACTORINGS},
        "counts": counts,
        "first_head_misses": first_misses,
    }
    (out / "binarization.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=ROOT / "data/snli/snli_1.0_test.jsonl.gz")
    parser.add_argument("--spinn-archive", type=Path, help="a full SPINN's model.tar.gz")
    parser.add_argument("--benepar-model", default=DEFAULT_MODEL)
    parser.add_argument(
        "--out-of-domain",
        action="store_true",
        help="SNLI test and SST dev, each of --benepar-models and the baselines",
    )
    parser.add_argument(
        "--benepar-models",
        nargs="+",
        default=[DEFAULT_MODEL],
        help="--out-of-domain: benepar models (names in models/ or files)",
    )
    parser.add_argument("--sst-data", type=Path, default=ROOT / "data/sst/dev.txt.gz")
    parser.add_argument("--downstream", type=Path, nargs="*", default=[], help="archives")
    parser.add_argument(
        "--downstream-sources",
        nargs="+",
        default=["gold", "benepar", "spinn", "balanced", "left_branching", "right_branching"],
    )
    parser.add_argument("--check-binarization", type=Path, nargs="*", default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "parsing")
    parser.add_argument("--limit", type=int, default=0, help="only the first N pairs")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cuda-device", type=int, default=-1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.check_binarization is not None:
        check_binarization(args.check_binarization, args.out)
        return
    if args.out_of_domain:
        start = time.perf_counter()
        out_of_domain(args, args.out)
        print(f"wall time {time.perf_counter() - start:.0f} s", file=sys.stderr)
        return
    if not args.spinn_archive:
        args.downstream_sources = [s for s in args.downstream_sources if s != "spinn"]
    start = time.perf_counter()
    pairs, distinct, trees = parse_quality(args, args.out)
    if args.downstream:
        downstream(args, args.out, pairs, distinct, trees)
    print(f"wall time {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
