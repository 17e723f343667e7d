"""The types that labeled constituency trees (PTB s-expressions, as SNLI's ``sentence1_parse``)
give the REDUCEs of a binary parse over the same words (NSHRDLU §3.3, typed REDUCE).

A REDUCE of the binary parse builds a constituent over a span of words. Its type is the label
of the labeled tree's constituent over exactly that span (the outermost, if a unary chain has
several; ROOT only if nothing else spans it), or, for a span that binarization introduced (a
part of an n-ary constituent, as "@NP" in a head-binarized treebank), the label of the smallest
constituent that contains it. Function tags are dropped (NP-SBJ -> NP).
"""

from typing import Dict, List, Optional, Sequence, Tuple

from spinn_allennlp.data.labeled_trees import MalformedTreeError
from spinn_core.transitions import REDUCE, step_spans

# (first word, last word + 1, label)
Span = Tuple[int, int, str]

# The REDUCE types of SNLI's Stanford-parser trees, most frequent first, as measured on the 1 %
# train subset's 11,004 premises and hypotheses (111,574 REDUCEs of the binary parses: NP
# 46.3 %, VP 20.6 %, S 17.9 %, PP 13.0 %, SBAR 0.9 %, ADJP 0.8 %, ADVP 0.2 %, then FRAG, UCP,
# PRN, ... under 0.1 % each, which share "OTHER").
SNLI_REDUCE_TYPES = ("NP", "VP", "S", "PP", "SBAR", "ADJP", "ADVP", "OTHER")


def labeled_spans(tree: str) -> Tuple[List[str], List[Span]]:
    """The words of a PTB tree ``(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ runs))))`` and the
    spans of its constituents (pre-terminals, which label single words, excluded), inner
    constituents before the ones containing them."""
    symbols = tree.replace("(", " ( ").replace(")", " ) ").split()
    words: List[str] = []
    spans: List[Span] = []
    # Each open constituent: (label, first word, number of children).
    open_nodes: List[List] = []
    position = 0
    while position < len(symbols):
        symbol = symbols[position]
        if symbol == "(":
            if position + 1 >= len(symbols) or symbols[position + 1] in "()":
                raise MalformedTreeError("a node without a label", f"at symbol {position}")
            open_nodes.append([symbols[position + 1], len(words), 0])
            position += 2
            continue
        if symbol == ")":
            if not open_nodes:
                raise MalformedTreeError(
                    "unbalanced brackets", f"unmatched ')' at symbol {position}"
                )
            label, first, children = open_nodes.pop()
            if len(words) == first:
                raise MalformedTreeError("an empty constituent", label)
            if open_nodes:
                open_nodes[-1][2] += 1
            if children:  # not a pre-terminal
                spans.append((first, len(words), label))
        else:
            if not open_nodes:
                raise MalformedTreeError("a word outside any constituent", f"at symbol {position}")
            words.append(symbol)
        position += 1
    if open_nodes:
        raise MalformedTreeError(
            "unbalanced brackets", f"{len(open_nodes)} unclosed constituent(s)"
        )
    if not words:
        raise MalformedTreeError("empty tree", "no words")
    return words, spans


def base_label(label: str) -> str:
    """NP-SBJ -> NP, S=2 -> S; labels that start with '-' (-NONE-) stay."""
    if label.startswith("-"):
        return label
    return label.split("-")[0].split("=")[0]


def reduce_labels(spans: Sequence[Span], transitions: Sequence[int]) -> List[Optional[str]]:
    """The type of each step of a binary parse's ``transitions`` (None at SHIFTs): see the
    module docstring. ``spans``: the labeled tree's constituents over the same words."""
    exact: Dict[Tuple[int, int], str] = {}
    for first, end, label in spans:  # inner first: the outermost label of a span wins
        if label != "ROOT" or (first, end) not in exact:
            exact[(first, end)] = base_label(label)
    return [
        exact.get(span) or _smallest_containing(spans, span)
        if transition == REDUCE and span is not None
        else None
        for transition, span in zip(transitions, step_spans(transitions))
    ]


def _smallest_containing(spans: Sequence[Span], span: Tuple[int, int]) -> str:
    best: Optional[Span] = None
    for candidate in spans:
        if candidate[0] <= span[0] and span[1] <= candidate[1]:
            if best is None or candidate[1] - candidate[0] < best[1] - best[0]:
                best = candidate
    return base_label(best[2]) if best is not None else "ROOT"


def reduce_type_ids(
    labels: Sequence[Optional[str]], inventory: Sequence[str], other: str = "OTHER"
) -> List[int]:
    """Ids of ``labels`` in ``inventory`` (-1 for None, i.e. SHIFT; ``other``'s id for a label
    the inventory lacks)."""
    index = {label: i for i, label in enumerate(inventory)}
    return [-1 if label is None else index.get(label, index[other]) for label in labels]
