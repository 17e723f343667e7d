"""Train a benepar constituency parser on SNLI's labeled trees (no pretrained transformer).

    .venv/bin/python scripts/train_benepar.py \\
        --train data/snli/snli_1.0_train_0.01.jsonl.gz --dev data/snli/snli_1.0_dev.jsonl.gz \\
        --out models/benepar_snli_1pct.pt --max-minutes 90 --threads 1

The best model by the periodic dev checks is written to --out as soon as it is found (float16
weights unless --float32) and, at the end, scored on the whole dev set after reloading it the
way benepar.Parser does.  Metrics go to <out without .pt>.metrics.json.  Dev sentences that
also occur in the training data are left out of dev unless --keep-dev-overlap.

With --sst-train, the model also learns the bracketing of SST's trees (binary; their
sentiment labels are not categories, so every SST constituent gets one label, BRACKET, and SST
words no tag), --sst-holdout of them held out for the dev checks; the best check is then picked
by unlabeled bracket F1 of the binarized trees (the tree-source table's measure), averaged over
SNLI dev and the held-out SST trees. --binarize makes SNLI's training trees binary as SNLI's own
binary parses are (head-outward, "@" labels inside). The model of results/parsing:

    .venv/bin/python scripts/train_benepar.py --train data/snli/snli_1.0_train_0.01.jsonl.gz \\
        --sst-train data/sst/train.txt.gz --binarize --dev data/snli/snli_1.0_dev.jsonl.gz \\
        --out models/benepar_snli_sst.pt --max-minutes 90 --threads 1

(--sst-holdout-only: the held-out sentences are scored, none of SST is learned: a control.)
SST's dev and test trees are never read here (dev is for scripts/evaluate_tree_sources.py).

Hyperparameters: the common ones have flags; any other ChartParser hparam or TrainSettings field
can be given as --set KEY=VALUE (see tools/benepar_training.py).
"""

import argparse
import dataclasses
import importlib.metadata
import json
import os
import platform
import sys
import time
from pathlib import Path

import benepar  # noqa: F401  (its version goes into the metrics)
import numpy as np
import torch

# The repository root on the path: the lab code in tools/ is not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spinn_allennlp.data.binarization import unbinarize
from tools import benepar_training as bt  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--train", nargs="+", required=True, help="SNLI JSONL(.gz) file(s)")
    p.add_argument("--dev", nargs="+", required=True, help="SNLI JSONL(.gz) file(s)")
    p.add_argument(
        "--sst-train",
        nargs="+",
        default=[],
        help="SST PTB-format tree file(s) whose bracketing is also learned",
    )
    p.add_argument(
        "--sst-holdout",
        type=int,
        default=500,
        help="sentences of --sst-train held out (never trained on) for the dev checks",
    )
    p.add_argument(
        "--sst-holdout-only",
        action="store_true",
        help="learn none of --sst-train: only score its held-out sentences (a control)",
    )
    p.add_argument(
        "--binarize",
        action="store_true",
        help="binarize SNLI's training trees head-outward (@-labeled nodes inside)",
    )
    p.add_argument(
        "--select-on",
        choices=("labeled", "unlabeled"),
        help="what picks the best dev check: labeled F1 on SNLI dev, or unlabeled bracket F1 "
        "averaged over SNLI dev and the SST held-out trees (default: unlabeled with "
        "--sst-train, else labeled)",
    )
    p.add_argument("--out", required=True, help="model file to write (.pt)")
    p.add_argument(
        "--max-minutes",
        type=float,
        default=0.0,
        help="wall-clock budget of the training loop (0 = none)",
    )
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch/OpenMP threads")
    p.add_argument("--tiny", action="store_true", help="a tiny model (smoke tests)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--d-model", type=int)
    p.add_argument("--num-layers", type=int)
    p.add_argument("--num-heads", type=int)
    p.add_argument("--d-kv", type=int)
    p.add_argument("--d-ff", type=int)
    p.add_argument("--no-predict-tags", action="store_true")
    p.add_argument("--lr", type=float, help="peak learning rate")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--warmup-steps", type=int)
    p.add_argument("--clip-grad-norm", type=float)
    p.add_argument(
        "--dev-eval-size",
        type=int,
        default=3000,
        help="dev sentences used for the periodic checks (0 = all)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other hparam or training setting",
    )
    p.add_argument("--float32", action="store_true", help="store float32 weights")
    p.add_argument("--keep-dev-overlap", action="store_true")
    p.add_argument("--log-every", type=int, default=20)
    return p.parse_args(argv)


def coerce(value: str, like):
    if isinstance(like, bool):
        if value.lower() in ("1", "true", "yes"):
            return True
        if value.lower() in ("0", "false", "no"):
            return False
        raise ValueError(f"not a boolean: {value}")
    return type(like)(value)


def main(argv=None) -> int:
    args = parse_args(argv)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(args.threads)
    except RuntimeError:
        pass
    hparams = dict(bt.TINY_HPARAMS if args.tiny else bt.DEFAULT_HPARAMS)
    settings = bt.TrainSettings(
        seed=args.seed,
        max_minutes=args.max_minutes,
        max_steps=args.max_steps,
        dev_eval_size=args.dev_eval_size,
        select_on=args.select_on or ("unlabeled" if args.sst_train else "labeled"),
    )
    named = {
        "d_model": args.d_model,
        "num_layers": args.num_layers,
        "num_heads": args.num_heads,
        "d_kv": args.d_kv,
        "d_ff": args.d_ff,
    }
    hparams.update({k: v for k, v in named.items() if v is not None})
    if args.no_predict_tags:
        hparams["predict_tags"] = False
    named = {
        "learning_rate": args.lr,
        "batch_size": args.batch_size,
        "warmup_steps": args.warmup_steps,
        "clip_grad_norm": args.clip_grad_norm,
    }
    settings = dataclasses.replace(settings, **{k: v for k, v in named.items() if v is not None})
    for item in args.set:
        key, _, value = item.partition("=")
        key = key.replace("-", "_")
        if key in hparams:
            hparams[key] = coerce(value, hparams[key])
        elif key in {f.name for f in dataclasses.fields(settings)}:
            settings = dataclasses.replace(settings, **{key: coerce(value, getattr(settings, key))})
        else:
            sys.exit(f"unknown setting {key!r}")

    start = time.time()
    train_trees = bt.read_snli_trees(args.train)
    dev_trees = bt.read_snli_trees(args.dev)
    overlap = 0
    if not args.keep_dev_overlap:
        seen = {tuple(t.leaves()) for t in train_trees}
        kept = [t for t in dev_trees if tuple(t.leaves()) not in seen]
        overlap, dev_trees = len(dev_trees) - len(kept), kept
    print(
        f"{len(train_trees)} distinct training sentences, {len(dev_trees)} dev sentences "
        f"({overlap} also in train dropped)",
        flush=True,
    )
    snli_train_sentences = len(train_trees)
    if args.binarize:
        train_trees = bt.binarize_trees(train_trees)
    sst_trees, sst_holdout = [], []
    if args.sst_train:
        sst_trees = bt.read_sst_trees(args.sst_train)
        # The same held-out sentences whatever --seed says.
        chosen = set(np.random.default_rng(0).permutation(len(sst_trees))[: args.sst_holdout])
        sst_holdout = [t for i, t in enumerate(sst_trees) if i in chosen]
        sst_trees = [t for i, t in enumerate(sst_trees) if i not in chosen]
        if args.sst_holdout_only:
            sst_trees = []
        print(
            f"SST: {len(sst_trees)} training bracketings, {len(sst_holdout)} held out",
            flush=True,
        )
        train_trees = train_trees + sst_trees
    print("hparams:", json.dumps(hparams, sort_keys=True), flush=True)
    print("settings:", json.dumps(dataclasses.asdict(settings), sort_keys=True), flush=True)

    out = Path(args.out)

    def save_best(parser, score):
        size = bt.save_parser(parser, out, half=not args.float32)
        print(f"  saved {out} ({size / 1e6:.2f} MB)", flush=True)

    result = bt.train_parser(
        train_trees,
        dev_trees,
        hparams=hparams,
        settings=settings,
        log=lambda s: print(s, flush=True),
        log_every=args.log_every,
        on_new_best=save_best,
        bracket_dev_trees=sst_holdout,
    )
    if result.best_dev is None:  # no dev checks happened: keep the last weights
        save_best(result.parser, None)

    # Score the file itself, loaded as benepar.Parser loads it, on all dev sentences.
    t0 = time.time()
    reloaded = bt.load_parser(out)
    dev_examples = [bt.TreeExample.from_tree(t) for t in dev_trees]
    predicted = bt.parse_examples(reloaded, dev_examples, settings.subbatch_max_tokens)
    final = bt.score_trees(dev_trees, [unbinarize(tree) for tree in predicted])
    unlabeled = {"snli_dev": bt.unlabeled_quality(dev_trees, predicted).as_dict()}
    if sst_holdout:
        holdout_examples = [bt.TreeExample.from_tree(t) for t in sst_holdout]
        predicted = bt.parse_examples(reloaded, holdout_examples, settings.subbatch_max_tokens)
        unlabeled["sst_holdout"] = bt.unlabeled_quality(sst_holdout, predicted).as_dict()
    eval_seconds = time.time() - t0
    total_seconds = time.time() - start
    size = out.stat().st_size
    params = bt.count_parameters(reloaded)
    print(f"final dev (all {len(dev_examples)} sentences, saved model): {final}")
    for name, quality in unlabeled.items():
        print(f"unlabeled bracket F1, {name}: {100 * quality['bracket_f1']:.2f}")
    print(
        f"dev labeled F1 {100 * final.f1:.2f}  params {params:,}  file {size / 1e6:.2f} MB  "
        f"train {result.train_seconds / 60:.1f} min  total {total_seconds / 60:.1f} min"
    )

    metrics = {
        "dev": final.as_dict(),
        "dev_sentences": len(dev_examples),
        "dev_overlap_dropped": overlap,
        "unlabeled": unlabeled,
        "best_check_dev_f1": result.best_dev.f1 if result.best_dev else None,
        "best_check": result.best_check,
        "best_step": result.best_step,
        "steps": result.steps,
        "epochs": result.epochs,
        "train_sentences": len(train_trees),
        "snli_train_sentences": snli_train_sentences,
        "sst_train_sentences": len(sst_trees),
        "sst_holdout_sentences": len(sst_holdout),
        "binarized_snli": args.binarize,
        "parameters": params,
        "file_bytes": size,
        "float16": not args.float32,
        "train_minutes": result.train_seconds / 60,
        "final_eval_seconds": eval_seconds,
        "total_minutes": total_seconds / 60,
        "threads": args.threads,
        "hparams": hparams,
        "settings": dataclasses.asdict(settings),
        "history": result.history,
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "benepar": importlib.metadata.version("benepar"),
        },
    }
    metrics_path = out.with_suffix(".metrics.json")
    metrics_path.write_text(json.dumps(metrics, indent=1) + "\n")
    print(f"wrote {metrics_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
