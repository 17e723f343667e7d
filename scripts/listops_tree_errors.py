"""Which of a ListOps parser's wrong brackets matter: a list split, or a list's arguments grouped
differently?

    .venv/bin/python scripts/listops_tree_errors.py --gold data/listops/test_d20s.tsv.gz \\
        --out results/listops/tree_errors best_draw/1=best_draw_s1.predictions.jsonl ...

Each ``NAME=FILE`` is ``allennlp predict ARCHIVE data/listops/test_d20s.tsv.gz
--use-dataset-reader`` output (one JSON object per test line, in order, with the predicted
``label`` and ``tree``).

A gold ListOps tree folds each list left to right, operator first: ``[MAX 2 [MIN 4 7 ] 0 ]`` is
``( ( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 7 ) ] ) ) 0 ) ] )``. Bracket F1 counts every prefix of that
fold; but a tree that keeps every list together and groups its arguments otherwise (``(4 7)``
before ``[MIN``) still gives each list one node that sees exactly its own arguments, while a
tree that splits a list (a node holding ``7 ]`` and the ``0`` after it) mixes two lists'
arguments. So, per run, on the lines with nested lists:

* **lists kept whole**: the share of nested lists (every list but the line's outermost one,
  which every tree keeps) that are a constituent of the predicted tree;
* **wrong brackets that only regroup**: of the predicted brackets not in gold, the share that
  cross no list (in a binary tree a span is a constituent exactly when no constituent crosses
  it, so these are the errors that leave every list whole);
* **operator joined last**: of the lists kept whole (the outermost included), the share whose
  operator joins a node of all its arguments and ``]`` (gold joins it to the first argument);
* the lines in three kinds — the gold tree exactly; every list whole but grouped otherwise;
  some list split — with the share of test lines of each kind, their median length in tokens
  (short lines are easier to parse and to compute: the kinds are not equally hard) and the
  model's accuracy on them.

Each run also on the lines with a MED list and on the others: MIN, MAX and SM are associative,
MED is not, so a grouping other than gold's should cost most there. Beside the runs, the same
counts for the balanced, left- and right-branching trees (no accuracy: they are not models).
Writes ``<out>.json`` and ``<out>.md``.
"""

import argparse
import gzip
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Dict, List, Optional, Sequence, Set, Tuple

from spinn_core.transitions import FIXED_SHAPES, parse_to_transitions
from spinn_core.tree_scores import brackets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tree_agreement import write_report  # noqa: E402  (the report's output)

Span = Tuple[int, int]  # (first word, last word + 1), as `brackets` gives them
KINDS = ("gold tree", "lists whole, grouped otherwise", "a list split")


def list_spans(words: Sequence[str]) -> Set[Span]:
    """The spans of a line's lists, ``[OP`` to its ``]``."""
    spans, opened = set(), []
    for position, word in enumerate(words):
        if word.startswith("["):
            opened.append(position)
        elif word == "]":
            if not opened:
                raise ValueError(f"a ] with no list open at word {position}: {' '.join(words)}")
            spans.add((opened.pop(), position + 1))
    if opened:
        raise ValueError(f"a list not closed: {' '.join(words)}")
    return spans


def nested_lists(words: Sequence[str]) -> Set[Span]:
    """The spans of a line's lists less the whole line's."""
    return list_spans(words) - {(0, len(words))}


def crosses(a: Span, b: Span) -> bool:
    """Whether two spans overlap without one holding the other."""
    return a[0] < b[0] < a[1] < b[1] or b[0] < a[0] < b[1] < a[1]


@dataclass
class LineErrors:
    lists: int  # nested lists
    lists_whole: int  # of them, constituents of the predicted tree
    wrong: int  # predicted brackets not in gold
    wrong_regrouping: int  # of them, crossing no list
    kind: str  # one of KINDS
    whole: int = 0  # lists, the outermost included, that are constituents
    operator_last: int = 0  # of them, those whose operator is joined after all its arguments


def line_errors(words: Sequence[str], gold: Sequence[int], predicted: Sequence[int]) -> LineErrors:
    lists = nested_lists(words)
    predicted_brackets = brackets(predicted, num_words=len(words))
    wrong = predicted_brackets - brackets(gold, num_words=len(words))
    regrouping = [span for span in wrong if not any(crosses(span, lst) for lst in lists)]
    whole = len(lists & predicted_brackets)
    nodes = predicted_brackets | {(0, len(words))}
    whole_lists = [span for span in list_spans(words) if span in nodes]
    operator_last = sum((first + 1, end) in nodes for first, end in whole_lists)
    if list(predicted) == list(gold):
        kind = KINDS[0]
    elif whole == len(lists):
        kind = KINDS[1]
    else:
        kind = KINDS[2]
    return LineErrors(
        len(lists), whole, len(wrong), len(regrouping), kind, len(whole_lists), operator_last
    )


@dataclass
class Tally:
    lines: int = 0
    lists: int = 0
    lists_whole: int = 0
    wrong: int = 0
    wrong_regrouping: int = 0
    whole: int = 0
    operator_last: int = 0
    kinds: Dict[str, List[int]] = field(default_factory=lambda: {k: [0, 0] for k in KINDS})
    lengths: Dict[str, List[int]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def add(self, errors: LineErrors, correct: Optional[bool], length: int) -> None:
        self.lines += 1
        self.lists += errors.lists
        self.lists_whole += errors.lists_whole
        self.wrong += errors.wrong
        self.wrong_regrouping += errors.wrong_regrouping
        self.whole += errors.whole
        self.operator_last += errors.operator_last
        self.kinds[errors.kind][0] += 1
        self.kinds[errors.kind][1] += int(bool(correct))
        self.lengths[errors.kind].append(length)

    def as_dict(self, with_accuracy: bool) -> Dict:
        def share(part: int, whole: int) -> Optional[float]:
            return part / whole if whole else None

        return {
            "lines": self.lines,
            "nested_lists": self.lists,
            "lists_whole": share(self.lists_whole, self.lists),
            "wrong_brackets": self.wrong,
            "wrong_regrouping": share(self.wrong_regrouping, self.wrong),
            "operator_last": share(self.operator_last, self.whole),
            "kinds": {
                kind: {
                    "lines": count,
                    "share": share(count, self.lines),
                    "accuracy": share(correct, count) if with_accuracy else None,
                    "median_tokens": median(self.lengths[kind]) if count else None,
                }
                for kind, (count, correct) in self.kinds.items()
            },
        }


def read_gold(path: Path) -> List[Tuple[str, List[str], List[int]]]:
    """Label, words and gold transitions of each ``label<TAB>tree`` line."""
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate((row for row in handle if row.strip()), 1):
            label, _, tree = line.rstrip("\n").partition("\t")
            try:
                words, transitions = parse_to_transitions(tree)
            except Exception as error:
                raise ValueError(f"{path}:{number}: not a binary tree: {error}") from error
            rows.append((label, words, transitions))
    return rows


def read_run(
    path: Path, gold: Sequence[Tuple[str, List[str], List[int]]]
) -> List[Tuple[str, List[int]]]:
    """Predicted label and transitions of each line, checked against gold's words."""
    lines = [row for row in path.read_text(encoding="utf-8").splitlines() if row.strip()]
    if len(lines) != len(gold):
        raise ValueError(f"{path}: {len(lines)} predictions for {len(gold)} gold lines")
    run = []
    for number, (line, (_, gold_words, _)) in enumerate(zip(lines, gold), 1):
        output = json.loads(line)
        for key in ("label", "tree"):
            if key not in output:
                raise ValueError(f"{path}:{number}: no {key!r} (it has {sorted(output)})")
        words, transitions = parse_to_transitions(output["tree"])
        if words != gold_words:
            raise ValueError(f"{path}:{number}: the tree's words are not the gold line's")
        run.append((str(output["label"]), transitions))
    return run


def has_median(words: Sequence[str]) -> bool:
    return "[MED" in words


def tally(gold, trees_and_labels, with_accuracy: bool, keep=lambda words: True) -> Dict:
    """The counts over the lines with nested lists (and ``keep(words)``)."""
    total = Tally()
    for (label, words, gold_transitions), (predicted_label, transitions) in zip(
        gold, trees_and_labels
    ):
        # A flat line has no list to split, only its arguments' grouping.
        if nested_lists(words) and keep(words):
            errors = line_errors(words, gold_transitions, transitions)
            total.add(errors, predicted_label == label if with_accuracy else None, len(words))
    return total.as_dict(with_accuracy)


def percent(value: Optional[float]) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def table(report: Dict) -> str:
    runs = ", ".join(f"`{name}` ({Path(path).name})" for name, path in report["runs"].items())
    head = (
        "| trees | lines | lists kept whole | wrong brackets that only regroup "
        "| operator joined last |"
    )
    rule = "|---|---:|---:|---:|---:|"
    for kind in KINDS:
        head += f" {kind}: lines | median tokens | accuracy |"
        rule += "---:|---:|---:|"
    rows = [
        f"Test lines with nested lists, written by `scripts/listops_tree_errors.py` "
        f"(gold `{report['gold']}`; predictions: {runs}). Percentages; a kind's lines as a "
        "share of the row's lines.",
        "",
        head,
        rule,
    ]
    entries = list(report["trees"].items())
    for name, groups in report["by_median"].items():
        entries += [(f"{name}, {group}", entry) for group, entry in groups.items()]
    for name, entry in entries:
        row = (
            f"| {name} | {entry['lines']} | {percent(entry['lists_whole'])} | "
            f"{percent(entry['wrong_regrouping'])} | {percent(entry['operator_last'])} |"
        )
        for kind in KINDS:
            cell = entry["kinds"][kind]
            tokens = "—" if cell["median_tokens"] is None else f"{cell['median_tokens']:g}"
            row += f" {percent(cell['share'])} | {tokens} | {percent(cell['accuracy'])} |"
        rows.append(row)
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] = None) -> Dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=PREDICTIONS.jsonl")
    parser.add_argument("--gold", type=Path, required=True, help="ListOps label<TAB>tree lines")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    args = parser.parse_args(argv)

    gold = read_gold(args.gold)
    trees, by_median, paths = {}, {}, {}
    for spec in args.runs:
        name, _, path = spec.partition("=")
        if not path:
            parser.error(f"{spec!r}: expected NAME=FILE")
        run = read_run(Path(path), gold)
        trees[name] = tally(gold, run, with_accuracy=True)
        # MIN, MAX and SM are associative, so any grouping of a list's arguments can compute
        # them two at a time; MED is not: where the grouping should matter most.
        by_median[name] = {
            "with a MED list": tally(gold, run, True, keep=has_median),
            "without": tally(gold, run, True, keep=lambda words: not has_median(words)),
        }
        paths[name] = path
    for name, tree_of in FIXED_SHAPES.items():
        baseline = [(None, tree_of(len(words))) for _, words, _ in gold]
        trees[name] = tally(gold, baseline, with_accuracy=False)
    report = {"gold": str(args.gold), "runs": paths, "trees": trees, "by_median": by_median}
    write_report(report, table(report), args.out)
    return report


if __name__ == "__main__":
    main()
