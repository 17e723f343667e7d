"""Bracket F1 (`spinn_core.tree_scores`): one count summed over a corpus or scored per
sentence, labeled or not."""

from spinn_core.transitions import (
    REDUCE,
    SHIFT,
    left_branching_transitions,
    right_branching_transitions,
)
from spinn_core.tree_scores import (
    BracketCounts,
    bracket_counts,
    bracket_f1,
    brackets,
    labeled_bracket_f1,
    tree_bracket_counts,
)

S, R = SHIFT, REDUCE


def test_bracket_f1():
    balanced = [S, S, R, S, S, R, R]
    left = left_branching_transitions(4)  # ( ( ( a b ) c ) d )
    right = right_branching_transitions(4)  # ( a ( b ( c d ) ) )
    assert bracket_f1(balanced, balanced) == 1.0
    assert bracket_f1(left, balanced) == 0.5  # shares ( a b ) of its two inner spans
    assert bracket_f1(right, left) == 0.0
    assert bracket_f1([S, S, R], [S, S, R]) is None  # nothing but the whole sentence


def test_bracket_counts_give_corpus_and_sentence_f1():
    balanced = [S, S, R, S, S, R, R]  # brackets (0, 2), (2, 4)
    left = left_branching_transitions(4)  # (0, 2), (0, 3)
    right = right_branching_transitions(4)  # (2, 4), (1, 4)
    first = tree_bracket_counts(left, balanced)
    second = tree_bracket_counts(right, balanced)
    assert (first.matched, first.gold, first.predicted) == (1, 2, 2)
    total = first + second + tree_bracket_counts(balanced, balanced)
    assert (total.matched, total.gold, total.predicted) == (4, 6, 6)
    assert total.f1 == total.precision == total.recall == 4 / 6
    # Sentence level: the mean of each sentence's own F1.
    assert [c.f1 for c in (first, second)] == [0.5, 0.5]
    assert bracket_f1(left, balanced) == first.f1


def test_bracket_counts_without_brackets():
    nothing = BracketCounts()
    assert (nothing.f1, nothing.precision, nothing.recall) == (0.0, 0.0, 0.0)
    missed = bracket_counts([], [(0, 2)])
    assert (missed.f1, missed.precision, missed.recall) == (0.0, 0.0, 0.0)

    class Evalb(BracketCounts):
        EMPTY = 1.0

    assert (Evalb().f1, Evalb().precision, Evalb().recall) == (1.0, 1.0, 1.0)
    assert Evalb(0, 1, 0).f1 == 0.0 and Evalb(0, 1, 0).precision == 0.0


def test_bracket_counts_match_multisets():
    counts = bracket_counts(["NP", "NP", "VP"], ["NP", "VP", "VP", "S"])
    assert (counts.matched, counts.gold, counts.predicted) == (2, 4, 3)


def test_labeled_brackets_pair_each_span_with_its_own_reduce():
    """In an invalid sequence a REDUCE that does nothing has no bracket: the types of the
    others stay with their own spans."""
    predicted, predicted_types = [S, R, S, S, R], [-1, 5, -1, -1, 2]
    assert brackets(predicted, predicted_types) == {((1, 3), 2)}
    gold, gold_types = [S, S, S, R, R], [-1, -1, -1, 2, 0]
    assert labeled_bracket_f1(predicted, predicted_types, gold, gold_types) == 1.0
    assert labeled_bracket_f1(predicted, [-1, 5, -1, -1, 3], gold, gold_types) == 0.0
