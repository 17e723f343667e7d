"""Draws the trees several models gave the same sentences, side by side, as one SVG picture, with
the demo's renderer (spinn_allennlp/demo/render.py): one row per sentence, one tree per model.

    .venv/bin/python scripts/draw_trees.py OUT.svg --lines 1,4,7 [--key tree] \\
        gold=gold.predictions.jsonl reinforce=reinforce.predictions.jsonl ...

Each NAME=FILE is a predictions file of `allennlp predict` (one JSON object per line, the same
input lines in the same order for every file); `--key` is the bracketed tree to draw ("tree"
for `spinn_classifier`, "premise_tree" / "hypothesis_tree" for the NLI model); `--lines` are
1-based line numbers of the predictions files. The first file is the reference the others are
captioned against (their unlabeled bracket F1 with it).
"""

import argparse
import html
import json
import re
from pathlib import Path
from typing import Dict, List, Tuple

from spinn_allennlp.demo.render import FONT_SIZE, tree_svg
from spinn_core.transitions import parse_to_transitions
from spinn_core.tree_scores import bracket_f1

GAP = 16
CAPTION = FONT_SIZE + 6


def read_trees(path: Path, key: str, lines: List[int]) -> List[str]:
    rows = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(rows[number - 1])[key] for number in lines]


def transitions_of(tree: str) -> List[int]:
    return parse_to_transitions(tree)[1]


def svg_size(svg: str) -> Tuple[int, int]:
    match = re.search(r'width="(\d+)" height="(\d+)"', svg)
    if match is None:
        return 0, CAPTION
    return int(match.group(1)), int(match.group(2))


def picture(models: Dict[str, List[str]]) -> str:
    """One SVG: for each sentence, a row with each model's tree under a caption."""
    names = list(models)
    reference = models[names[0]]
    parts, y, width = [], GAP, 0
    for index, gold in enumerate(reference):
        x, row_height = GAP, 0
        for name in names:
            tree = models[name][index]
            caption = name
            if name != names[0]:
                f1 = bracket_f1(transitions_of(tree), transitions_of(gold))
                caption += "" if f1 is None else f" (F1 {100 * f1:.0f} against {names[0]})"
            drawing = tree_svg(tree, label=f"{name}: {tree}")
            tree_width, tree_height = svg_size(drawing)
            parts.append(
                f'<text x="{x}" y="{y + FONT_SIZE}" font-family="sans-serif" '
                f'font-size="{FONT_SIZE}" font-weight="bold">{html.escape(caption)}</text>'
            )
            parts.append(drawing.replace("<svg ", f'<svg x="{x}" y="{y + CAPTION}" ', 1))
            x += max(tree_width, len(caption) * 7) + GAP
            row_height = max(row_height, tree_height + CAPTION)
        width = max(width, x)
        y += row_height + GAP
    header = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
        f'viewBox="0 0 {width} {y}"><rect width="100%" height="100%" fill="white"/>'
    )
    return header + "".join(parts) + "</svg>\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("models", nargs="+", help="NAME=PREDICTIONS.jsonl, the reference first")
    parser.add_argument("--lines", required=True, help="1-based line numbers, e.g. 1,4,7")
    parser.add_argument("--key", default="tree")
    args = parser.parse_args()
    lines = [int(number) for number in args.lines.split(",")]
    models = {}
    for spec in args.models:
        name, path = spec.split("=", 1)
        models[name] = read_trees(Path(path), args.key, lines)
    args.out.write_text(picture(models), encoding="utf-8")
    print(f"wrote {args.out}: {len(lines)} sentences x {len(models)} models")


if __name__ == "__main__":
    main()
