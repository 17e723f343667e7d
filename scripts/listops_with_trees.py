"""A ListOps file rewritten with a parser's trees as its brackets: each line keeps its label,
and its expression is bracketed as the tree that `allennlp predict ARCHIVE DATA
--use-dataset-reader` gave for it (the `tree` of each output line, in the file's order).

    .venv/bin/python scripts/listops_with_trees.py DATA PREDICTIONS OUT

DATA: a ListOps file (`label<TAB>expression`, gzipped or not). What such a file is for: a
TreeLSTM trained from scratch on a latent parser's trees (`LISTOPS_TRAIN=OUT
LISTOPS_DEV=... allennlp train training_config/classification/listops_spinn_pi_nt.jsonnet ...`:
is it the trees or the joint training that holds the parser's model back?), or the trees a
composition is compared on (`scripts/parser_collapse.py reward --trees OUT`). A prediction
whose tree is not over the line's tokens, or files of different lengths, are an error.
"""

import argparse
import gzip
import json
from pathlib import Path
from typing import List, Optional, Sequence


def read_lines(path: Path) -> List[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:  # type: ignore[operator]
        return [line.rstrip("\n") for line in lines if line.strip()]


def tokens(expression: str) -> List[str]:
    return [symbol for symbol in expression.split() if symbol not in ("(", ")")]


def with_trees(data: Sequence[str], predictions: Sequence[str]) -> List[str]:
    """Each line of `data` with the tree of the prediction of the same index as its brackets."""
    if len(data) != len(predictions):
        raise ValueError(f"{len(data)} lines but {len(predictions)} predictions")
    rewritten = []
    for number, (line, prediction) in enumerate(zip(data, predictions), start=1):
        label, expression = line.split("\t")
        tree = json.loads(prediction)["tree"]
        if tokens(tree) != tokens(expression):
            raise ValueError(f"line {number}: the predicted tree is not over the line's tokens")
        rewritten.append(f"{label}\t{tree}")
    return rewritten


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("predictions", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    lines = with_trees(read_lines(args.data), read_lines(args.predictions))
    args.out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"{args.out}: {len(lines)} lines")
    return len(lines)


if __name__ == "__main__":
    main()
