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

Pure Python; the brackets and their counts are :mod:`spinn_core.tree_scores`'
(``brackets``, ``BracketCounts``), as for every bracket F1 in the project.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from spinn_core.transitions import SHIFT, is_valid
from spinn_core.tree_scores import BracketCounts, bracket_counts, brackets

__all__ = ["ParseQuality", "brackets"]


@dataclass
class ParseQuality:
    """Accumulates the scores of predicted trees against gold trees (see the module docstring).

    `add(gold, predicted)` per sentence (predicted None: no tree); `as_dict()` gives the
    fractions (in [0, 1]) and the counts.
    """

    sentences: int = 0
    valid: int = 0
    exact: int = 0
    bracket_totals: BracketCounts = field(default_factory=BracketCounts)
    steps: int = 0
    steps_correct: int = 0
    sentence_f1: List[float] = field(default_factory=list)

    def add(self, gold: Sequence[int], predicted: Optional[Sequence[int]]) -> None:
        num_words = sum(1 for t in gold if t == SHIFT)
        self.sentences += 1
        self.steps += len(gold)
        if predicted is None or not is_valid(predicted, num_words):
            counts = bracket_counts([], brackets(gold))  # its gold brackets count against recall
        else:
            predicted = list(predicted)
            counts = bracket_counts(brackets(predicted), brackets(gold))
            self.valid += 1
            self.exact += int(predicted == list(gold))
            self.steps_correct += sum(int(p == g) for p, g in zip(predicted, gold))
        self.bracket_totals += counts
        if counts.gold:
            self.sentence_f1.append(counts.f1)

    def as_dict(self) -> Dict[str, float]:
        return {
            "bracket_f1": self.bracket_totals.f1,
            "bracket_precision": self.bracket_totals.precision,
            "bracket_recall": self.bracket_totals.recall,
            "sentence_mean_f1": (
                sum(self.sentence_f1) / len(self.sentence_f1) if self.sentence_f1 else 0.0
            ),
            "exact_tree_rate": self.exact / self.sentences if self.sentences else 0.0,
            "valid_tree_rate": self.valid / self.sentences if self.sentences else 0.0,
            "transition_accuracy": self.steps_correct / self.steps if self.steps else 0.0,
            "sentences": self.sentences,
            "valid": self.valid,
            "exact": self.exact,
            "matched_brackets": self.bracket_totals.matched,
            "gold_brackets": self.bracket_totals.gold,
            "predicted_brackets": self.bracket_totals.predicted,
        }
