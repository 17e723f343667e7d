from typing import Dict, Optional

import torch
from allennlp.training.metrics import Metric

from spinn_allennlp.training.metrics.share import Share
from spinn_core.transitions import PAD, SHIFT, is_valid
from spinn_core.tree_scores import bracket_f1, labeled_bracket_f1


@Metric.register("parse_metrics")
class ParseMetrics(Metric):
    """How well a parser's transitions match the gold ones:

    * `transition_accuracy`: share of gold (non-PAD) steps predicted right;
    * `tree_accuracy`: share of sentences whose whole transition sequence is the gold one;
    * `valid_tree_rate`: share of sentences whose predicted transitions build one binary tree
      over all their words (always 1 for SPINN's legal-moves parser; the original
      implementation's argmax parser fell short of it);
    * `bracket_f1`: unlabeled bracket F1 of the predicted tree against the gold tree, averaged
      over sentences, counting constituents of two or more words other than the whole
      sentence (sentences of fewer than three words have none and are left out);
    * `labeled_bracket_f1` (with `labeled`, for typed REDUCE): the same, a constituent counting
      only with its type right too.

    Call with `predicted` and `gold` transitions of shape (batch_size, steps), PAD (-1) after
    each gold sequence's end; `predicted` is cut to the gold width. Sentences whose gold row is
    all PAD (no gold tree) are not scored; a metric nothing was scored for is left out of
    `get_metric` (not 0). Sums over batches and workers (see `Share`).

    Registered as a `Metric` with name "parse_metrics".

    # Parameters

    labeled : `bool`, optional (default = `False`)
        Also score typed REDUCEs: call with `predicted_types` and `gold_types` as well (shape
        (batch_size, steps), the type of each REDUCE).
    """

    def __init__(self, labeled: bool = False) -> None:
        self._labeled = labeled
        self._labeled_bracket_f1 = Share()
        self._transition_accuracy = Share()
        self._tree_accuracy = Share()
        self._valid_tree_rate = Share()
        self._bracket_f1 = Share()

    @torch.no_grad()
    def __call__(
        self,
        predicted: torch.Tensor,
        gold: torch.Tensor,
        predicted_types: Optional[torch.Tensor] = None,
        gold_types: Optional[torch.Tensor] = None,
    ) -> None:
        gold = gold.long()
        steps = min(predicted.size(1), gold.size(1))
        predicted, gold = predicted[:, :steps], gold[:, :steps]
        # Sentences without a gold tree (all PAD: a line without a parse next to lines with
        # one) are left out of every metric.
        scored = (gold != PAD).any(dim=1)
        if not bool(scored.all()):
            predicted, gold = predicted[scored], gold[scored]
            if predicted_types is not None and gold_types is not None:
                predicted_types, gold_types = predicted_types[scored], gold_types[scored]
        real = gold != PAD
        correct = (predicted == gold) & real
        self._transition_accuracy(int(correct.sum()), int(real.sum()))
        same_tree = (correct == real).all(dim=1)
        self._tree_accuracy(int(same_tree.sum()), same_tree.numel())
        num_words = (gold == SHIFT).sum(dim=1).tolist()
        valid_trees = 0
        f1_sum, f1_count = 0.0, 0
        for row, gold_row, row_real, n in zip(predicted.cpu(), gold.cpu(), real.cpu(), num_words):
            sequence = row[row_real].tolist()
            valid_trees += is_valid(sequence, n)
            f1 = bracket_f1(sequence, gold_row[row_real].tolist())
            if f1 is not None:
                f1_sum += f1
                f1_count += 1
        self._valid_tree_rate(valid_trees, len(num_words))
        self._bracket_f1(f1_sum, f1_count)
        if self._labeled:
            if predicted_types is None or gold_types is None:
                raise ValueError("labeled parse metrics need predicted and gold types")
            labeled_sum, labeled_count = 0.0, 0
            rows = zip(predicted, gold, predicted_types, gold_types[:, :steps], real)
            for row, gold_row, types, gold_row_types, row_real in rows:
                f1 = labeled_bracket_f1(
                    row[row_real].tolist(),
                    types[: row.size(0)][row_real].tolist(),
                    gold_row[row_real].tolist(),
                    gold_row_types[row_real].tolist(),
                )
                if f1 is not None:
                    labeled_sum += f1
                    labeled_count += 1
            self._labeled_bracket_f1(labeled_sum, labeled_count)

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        """The metrics measured since the last reset. One that could not be measured (no gold
        tree reached the metric, e.g. a parser trained and evaluated without gold transitions;
        no sentence of three or more words for bracket F1) is left out rather than read as 0."""
        shares = {
            "transition_accuracy": self._transition_accuracy,
            "tree_accuracy": self._tree_accuracy,
            "valid_tree_rate": self._valid_tree_rate,
            "bracket_f1": self._bracket_f1,
        }
        if self._labeled:
            shares["labeled_bracket_f1"] = self._labeled_bracket_f1
        measured = {name: share.measured for name, share in shares.items()}
        values = {name: share.get_metric(reset) for name, share in shares.items()}
        return {name: value for name, value in values.items() if measured[name]}

    def reset(self) -> None:
        for share in (
            self._transition_accuracy,
            self._tree_accuracy,
            self._valid_tree_rate,
            self._bracket_f1,
            self._labeled_bracket_f1,
        ):
            share.reset()
