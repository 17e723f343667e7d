"""Bracket F1: how a tree's constituents compare with a gold tree's.

Bracket F1 is one count, :class:`BracketCounts` (brackets matched, in gold, predicted), from
:func:`bracket_counts` over any brackets (spans, labeled spans, EVALB's labeled brackets):
summed over a corpus it gives micro-averaged precision, recall and F1; per sentence, the F1 that
the parse metrics average (:func:`bracket_f1`, :func:`labeled_bracket_f1`, over the brackets a
transition sequence builds, :func:`brackets`). Pure Python, as ``transitions.py``.
"""

from collections import Counter
from dataclasses import astuple, dataclass
from typing import ClassVar, Hashable, Iterable, Optional, Sequence, Set, TypeVar

from spinn_core.transitions import REDUCE, SHIFT, step_spans

Counts = TypeVar("Counts", bound="BracketCounts")


def brackets(
    transitions: Sequence[int],
    types: Optional[Sequence[int]] = None,
    num_words: Optional[int] = None,
) -> Set[Hashable]:
    """The brackets bracket F1 counts: the spans ``(first, last + 1)`` of the constituents
    :func:`constituent_spans` finds, less the whole sentence ``(0, num_words)`` (every tree
    has it; ``num_words`` defaults to the number of SHIFTs). With ``types`` (typed REDUCE: each
    step's type, read at REDUCEs), ``(span, type)`` pairs: labeled brackets."""
    whole = (0, sum(1 for t in transitions if t == SHIFT) if num_words is None else num_words)
    spans = step_spans(transitions, skip_invalid=True)
    labels = types if types is not None else [None] * len(transitions)
    return {
        span if types is None else (span, label)
        for t, span, label in zip(transitions, spans, labels)
        if t == REDUCE and span is not None and span != whole
    }


@dataclass
class BracketCounts:
    """Brackets matched, in gold and predicted, for one sentence (:func:`bracket_counts`) or a
    corpus (their sum, ``+``): corpus-level (micro-averaged) precision, recall and F1 come from
    the summed counts, sentence-level F1 from each sentence's own.

    With no bracket on either side F1 is ``EMPTY`` (0 here; a subclass may follow EVALB, which
    scores it 1: nothing missed, nothing wrong); with none predicted precision is 0 (or
    ``EMPTY``, when gold has none either), and likewise recall.
    """

    EMPTY: ClassVar[float] = 0.0

    matched: int = 0
    gold: int = 0
    predicted: int = 0

    def __add__(self: Counts, other: Counts) -> Counts:
        return type(self)(*(a + b for a, b in zip(astuple(self), astuple(other))))

    @property
    def precision(self) -> float:
        if not self.predicted:
            return 0.0 if self.gold else self.EMPTY
        return self.matched / self.predicted

    @property
    def recall(self) -> float:
        if not self.gold:
            return 0.0 if self.predicted else self.EMPTY
        return self.matched / self.gold

    @property
    def f1(self) -> float:
        """The harmonic mean of precision and recall, ``2 matched / (gold + predicted)``."""
        if not self.gold and not self.predicted:
            return self.EMPTY
        return 2 * self.matched / (self.gold + self.predicted)


def bracket_counts(predicted: Iterable[Hashable], gold: Iterable[Hashable]) -> BracketCounts:
    """Counts of two collections of brackets (spans, labeled spans, ...), matched as multisets:
    each gold bracket matches at most one equal predicted bracket (for sets, the
    intersection)."""
    if isinstance(predicted, (set, frozenset)) and isinstance(gold, (set, frozenset)):
        return BracketCounts(len(predicted & gold), len(gold), len(predicted))  # sets: faster
    predicted_counts, gold_counts = Counter(predicted), Counter(gold)
    return BracketCounts(
        matched=sum((predicted_counts & gold_counts).values()),
        gold=sum(gold_counts.values()),
        predicted=sum(predicted_counts.values()),
    )


def tree_bracket_counts(
    predicted: Sequence[int],
    gold: Sequence[int],
    predicted_types: Optional[Sequence[int]] = None,
    gold_types: Optional[Sequence[int]] = None,
) -> BracketCounts:
    """:func:`bracket_counts` of the :func:`brackets` of two transition sequences over the
    same words (the whole sentence is the gold one's), labeled with both ``*_types``."""
    num_words = sum(1 for t in gold if t == SHIFT)
    return bracket_counts(
        brackets(predicted, predicted_types, num_words), brackets(gold, gold_types, num_words)
    )


def bracket_f1(predicted: Sequence[int], gold: Sequence[int]) -> Optional[float]:
    """Unlabeled bracket F1 of the tree ``predicted`` builds against the tree ``gold`` builds,
    over constituents of two or more words other than the whole sentence (which every tree
    has); None when the gold tree has no such constituent (fewer than three words)."""
    counts = tree_bracket_counts(predicted, gold)
    return counts.f1 if counts.gold else None


def labeled_bracket_f1(
    predicted: Sequence[int],
    predicted_types: Sequence[int],
    gold: Sequence[int],
    gold_types: Sequence[int],
) -> Optional[float]:
    """:func:`bracket_f1` where a constituent counts only with the right type too (typed
    REDUCE): ``*_types`` give each step's type (read at REDUCEs)."""
    counts = tree_bracket_counts(predicted, gold, predicted_types, gold_types)
    return counts.f1 if counts.gold else None
