"""A static HTML page of a predictions file: `python -m spinn_allennlp.demo.static
predictions.jsonl -o page.html`.

The file is what `allennlp predict ... --predictor spinn_nli` writes, one JSON object per line.
Each line becomes a section with its label probabilities and both trees; a line with `"error"`
(or one that is not JSON at all) becomes an error message and the rest go on. Needs no
AllenNLP.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence

from spinn_allennlp.demo.render import predictions_page


def read_predictions(path: Path) -> List[Any]:
    """The predictions of a JSONL file, in order; a line that is not JSON becomes
    `{"error": ..., "input": line}`. Blank lines are skipped."""
    predictions: List[Any] = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                predictions.append(json.loads(line))
            except (ValueError, RecursionError) as error:
                predictions.append(
                    {"error": f"{path.name}:{number}: not JSON ({error})", "input": line.rstrip()}
                )
    return predictions


def write_page(predictions_file: Path, output: Path, title: Optional[str] = None) -> int:
    """Writes the page and returns how many predictions it shows."""
    predictions = read_predictions(predictions_file)
    output.write_text(
        predictions_page(predictions, title=title or f"SPINN predictions: {predictions_file.name}"),
        encoding="utf-8",
    )
    return len(predictions)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spinn_allennlp.demo.static",
        description="Draw the trees of a spinn_nli predictions file (JSONL) as one HTML page.",
    )
    parser.add_argument("predictions", type=Path, help="output of `allennlp predict`")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the HTML page")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    count = write_page(args.predictions, args.output, args.title)
    print(f"wrote {args.output} ({count} predictions)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
