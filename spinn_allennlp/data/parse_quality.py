"""How close a tree source's binary trees are to gold binary trees.

Unlabeled bracket scores, EVALB-style but for binary trees over all tokens:

* a bracket is the span ``(first word, last word + 1)`` of a node with two children; words are
  not brackets, and neither is the whole sentence (every tree has it, so counting it would only
  add a free match per sentence);
* punctuation is kept: SPINN composes over every token, so where a full stop attaches changes
  the vector it computes (EVALB's ``COLLINS.prm`` deletes punctuation, which for binary trees
  would also delete the brackets that join it);
* brackets are compared as sets per sentence (a binary tree has each span at most once);
  precision, recall and F1 are micro-averaged over the corpus (matched brackets summed over
  sentences), and also given as the mean of per-sentence F1 over the sentences that have
  brackets (three or more words), the convention of most latent-tree papers;
* a sentence the source has no valid tree for predicts no brackets (its gold brackets count
  against recall) and is counted as not valid.

Besides brackets: the exact-tree rate (the whole tree equals gold), the valid-tree rate, and
the transition accuracy (the share of the ``2N - 1`` SHIFT/REDUCE steps equal to gold's,
position by position: the SPINN paper's parse measure, 92.4 % on SNLI test).

Pure Python.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from spinn_allennlp.core.transitions import SHIFT, is_valid

Span = Tuple[int, int]


def brackets(transitions: Sequence[int]) -> Set[Span]:
    """The spans ``(start, end)`` of a binary tree's two-child nodes, the whole sentence left
    out. ``transitions`` must be valid."""
    stack: List[Span] = []
    spans: Set[Span] = set()
    position = 0
    for transition in transitions:
        if transition == SHIFT:
            stack.append((position, position + 1))
            position += 1
        else:
            right = stack.pop()
            left = stack.pop()
            stack.append((left[0], right[1]))
            spans.add(stack[-1])
    spans.discard((0, position))
    return spans


@dataclass
class ParseQuality:
    """Accumulates the scores of predicted trees against gold trees (see the module docstring).

    `add(gold, predicted)` per sentence (predicted None: no tree); `as_dict()` gives the
    fractions (in [0, 1]) and the counts.
    """

    sentences: int = 0
    valid: int = 0
    exact: int = 0
    matched: int = 0
    gold_brackets: int = 0
    predicted_brackets: int = 0
    steps: int = 0
    steps_correct: int = 0
    sentence_f1: List[float] = field(default_factory=list)

    def add(self, gold: Sequence[int], predicted: Optional[Sequence[int]]) -> None:
        num_words = sum(1 for t in gold if t == SHIFT)
        gold_spans = brackets(gold)
        self.sentences += 1
        self.steps += len(gold)
        self.gold_brackets += len(gold_spans)
        if predicted is None or not is_valid(predicted, num_words):
            if gold_spans:
                self.sentence_f1.append(0.0)
            return
        predicted = list(predicted)
        predicted_spans = brackets(predicted)
        matched = len(gold_spans & predicted_spans)
        self.valid += 1
        self.exact += int(predicted == list(gold))
        self.matched += matched
        self.predicted_brackets += len(predicted_spans)
        self.steps_correct += sum(int(p == g) for p, g in zip(predicted, gold))
        if gold_spans:
            self.sentence_f1.append(_f1(matched, len(predicted_spans), len(gold_spans)))

    def as_dict(self) -> Dict[str, float]:
        precision = self.matched / self.predicted_brackets if self.predicted_brackets else 0.0
        recall = self.matched / self.gold_brackets if self.gold_brackets else 0.0
        return {
            "bracket_f1": _f1(self.matched, self.predicted_brackets, self.gold_brackets),
            "bracket_precision": precision,
            "bracket_recall": recall,
            "sentence_mean_f1": (
                sum(self.sentence_f1) / len(self.sentence_f1) if self.sentence_f1 else 0.0
            ),
            "exact_tree_rate": self.exact / self.sentences if self.sentences else 0.0,
            "valid_tree_rate": self.valid / self.sentences if self.sentences else 0.0,
            "transition_accuracy": self.steps_correct / self.steps if self.steps else 0.0,
            "sentences": self.sentences,
            "valid": self.valid,
            "exact": self.exact,
            "matched_brackets": self.matched,
            "gold_brackets": self.gold_brackets,
            "predicted_brackets": self.predicted_brackets,
        }


def _f1(matched: int, predicted: int, gold: int) -> float:
    return 2 * matched / (predicted + gold) if predicted + gold else 0.0
