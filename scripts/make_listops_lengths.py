"""Writes the ListOps length-generalisation test sets: 2,000 distinct expressions in each of
the length bins 200-300, 500-600 and 900-1000 (tokens, brackets not counted, strictly
between the bounds), drawn by our generator with the parameters of Havrylov et al.'s (2019)
extrapolation sets (operators MIN, MAX, MED, SM; lists with probability 0.25, 2-5 arguments,
depth at most 20) and a fixed seed per bin, in the published format, gzipped with no time
stamp, so that the files are the same bytes on every machine (DIR: data/listops/lengths).

    .venv/bin/python scripts/make_listops_lengths.py [--out DIR] [--bins 200-300 ...]

The committed files are these; tests/classification/test_listops.py regenerates the first bin
byte for byte and checks the others line by line (the 900-1000 bin takes ~25 minutes to draw:
about 400 draws in a million fall in it).
"""

import argparse
import gzip
import sys
from pathlib import Path

from spinn_allennlp.classification.listops import format_line

# The repository root on the path: the lab code in tools/ is not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.listops_generator import length_bin_sample  # noqa: E402

BINS = ((200, 300), (500, 600), (900, 1000))
COUNT = 2000
# One seed per bin: a bin can be redrawn alone.
SEED = 20190601


def bin_name(shortest: int, longest: int) -> str:
    return f"test_{shortest}_{longest}.tsv.gz"


def bin_bytes(shortest: int, longest: int, count: int = COUNT) -> bytes:
    """The gzipped file of one bin (mtime 0: the same bytes everywhere)."""
    expressions = length_bin_sample(count, shortest, longest, SEED + shortest)
    text = "".join(format_line(expression) + "\n" for expression in expressions)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="data/listops/lengths")
    parser.add_argument("--bins", nargs="*", default=[f"{a}-{b}" for a, b in BINS])
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for item in args.bins:
        shortest, longest = (int(bound) for bound in item.split("-"))
        path = out / bin_name(shortest, longest)
        path.write_bytes(bin_bytes(shortest, longest))
        print(f"{path}: {COUNT} examples, {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
