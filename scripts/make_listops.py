"""Writes ListOps training and development data from our generator (the published test set is
the only ListOps file at hand; see tools/listops_generator.py for the process and
tests/classification/test_listops.py for the check against the test file's statistics).

    .venv/bin/python scripts/make_listops.py [--train 85000] [--dev 5000] [--seed 20180601]
        [--test data/listops/test_d20s.tsv.gz] [--out data/listops/generated]

Writes <out>/train_d20s.tsv and <out>/dev_d20s.tsv (label<TAB>bracketed, the published
format), in random order (a reader's `max_instances` takes a random subset), with no example of
the test file. Deterministic for a seed; ~10 s.
"""

import argparse
import gzip
import sys
from pathlib import Path

from spinn_allennlp.classification.listops import format_line, read_lines, tokens

# The repository root on the path: the lab code in tools/ is not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.listops_generator import generate_dataset  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=85_000)
    parser.add_argument("--dev", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=20180601)
    parser.add_argument("--test", default="data/listops/test_d20s.tsv.gz")
    parser.add_argument("--out", default="data/listops/generated")
    args = parser.parse_args()

    opener = gzip.open if args.test.endswith(".gz") else open
    with opener(args.test, "rt", encoding="utf-8") as test_file:
        test = [" ".join(tokens(expression)) for _, expression in read_lines(test_file)]
    train, dev = generate_dataset([args.train, args.dev], args.seed, exclude=test)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, split in (("train_d20s.tsv", train), ("dev_d20s.tsv", dev)):
        (out / name).write_text("".join(format_line(e) + "\n" for e in split), encoding="utf-8")
        print(f"{out / name}: {len(split)} examples")


if __name__ == "__main__":
    main()
