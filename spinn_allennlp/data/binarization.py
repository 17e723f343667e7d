"""n-ary labeled constituency trees -> the unlabeled binary trees SPINN composes over.

A parser such as benepar gives trees like ``(S (NP (DT A) (NN dog)) (VP (VBZ runs)) (. .))``:
nodes with any number of children, chains of one-child nodes (``(NP (NN dogs))``, and the
``TOP``/``ROOT`` node over the sentence), and a part-of-speech node over every word. SPINN needs
a binary tree over the words (one REDUCE per two-child node). Two steps make one:

* **Unary chains collapse**: a node with one child *is* its child (a part-of-speech node is its
  word), so every remaining node joins two or more constituents.
* **Binarization, head-outward** (:func:`binarize`): a node with children ``l1 .. lk H r1 ..
  rm`` around its head child ``H`` becomes ``(l1 (... (lk ((((H r1) r2) ...) rm))))``: the head
  takes its right siblings first, one at a time, then its left siblings from the nearest out.
  The head child is chosen by a head-rule table in the style of Collins (1999, appendix A) as the
  Stanford parser's ``ModCollinsHeadFinder`` modifies it (:data:`HEAD_RULES`, :func:`head_child`):
  a verb heads its verb phrase, a preposition its prepositional phrase, the last noun its noun
  phrase, the first conjunct a coordination.

**Why head-outward.** SNLI's ``sentence1_binary_parse`` (what the SPINN models train on, and the
gold trees that parse quality is measured against) is the Stanford parser's own labeled parse
(``sentence1_parse``) binarized this way. Binarizing SNLI's labeled parses with this module gives
exactly the corpus's binary parse for every one of the 51,004 labeled parses of the bundled
train, dev and test files (``scripts/evaluate_tree_sources.py --check-binarization``).
Plain right-factoring (``(c1 (c2 (... ck)))``, nltk's ``chomsky_normal_form`` default) gives
it for 47.3 % of them, left-factoring for 13.7 %. So a parser whose labeled trees were
as good as the Stanford parser's would also score as well against the binary gold trees, instead
of losing brackets to a different binarization convention. The plain factorings are available
(``factor="right"`` / ``"left"``) for comparison.

Pure Python on ``nltk.Tree`` (or anything with ``label()`` and list-like children).
"""

from typing import Any, Callable, Dict, List, Sequence, Tuple, TypeVar

from spinn_core.transitions import Tree, tree_to_transitions

Result = TypeVar("Result")

# Direction to search the children ("left": first to last, "right": last to first), then the
# categories in priority order: the first category found (searching the whole child list for
# each category in turn) heads. An empty category list means the first child in that direction.
HeadRule = Tuple[str, Tuple[str, ...]]
HEAD_RULES: Dict[str, Tuple[HeadRule, ...]] = {
    "ADJP": (
        ("left", ("$",)),
        (
            "rightdis",
            ("NNS", "NN", "JJ", "QP", "VBN", "VBG"),
        ),
        ("left", ("ADJP",)),
        ("rightdis", ("JJP", "JJR", "JJS", "DT", "RB", "RBR", "CD", "IN", "VBD")),
        ("left", ("ADVP", "NP")),
    ),
    "JJP": (("left", ("NNS", "NN", "$", "QP", "JJ", "VBN", "VBG", "ADJP", "JJP", "JJR", "NP")),),
    "ADVP": (
        ("left", ("ADVP", "IN")),
        ("rightdis", ("RB", "RBR", "RBS", "JJ", "JJR", "JJS")),
        (
            "rightdis",
            ("RP", "DT", "NN", "CD", "NP", "VBN", "NNP", "CC", "FW", "NNS", "ADJP", "NML"),
        ),
    ),
    "CONJP": (("right", ("CC", "RB", "IN")),),
    "FRAG": (("right", ()),),
    "INTJ": (("left", ()),),
    "LST": (("right", ("LS", ":")),),
    "NAC": (
        (
            "left",
            ("NN", "NNS", "NML", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP"),
        ),
        ("left", ("VBG", "JJ", "JJS", "JJR", "ADJP", "JJP", "FW")),
    ),
    "PP": (
        ("right", ("IN", "TO", "VBG", "VBN", "RP", "FW", "JJ", "SYM")),
        ("left", ("PP",)),
    ),
    "PRN": (
        (
            "left",
            (
                *("VP", "NP", "PP", "SQ", "S", "SINV", "SBAR", "ADJP", "JJP", "ADVP", "UCP"),
                *("INTJ", "WHNP", "NAC", "VBP", "JJ", "NN", "NNP"),
            ),
        ),
    ),
    "PRT": (("right", ("RP",)),),
    "QP": (("left", ("$", "IN", "NNS", "NN", "JJ", "CD", "PDT", "DT", "RB", "NCD", "QP", "JJR")),),
    "RRC": (("left", ("RRC",)), ("right", ("VP", "ADJP", "JJP", "NP", "PP", "ADVP"))),
    "S": (("left", ("TO", "VP", "S", "FRAG", "SBAR", "ADJP", "JJP", "UCP", "NP", "P")),),
    "SBAR": (
        (
            "left",
            ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG"),
        ),
    ),
    "SBARQ": (("left", ("SQ", "S", "SINV", "SBARQ", "FRAG", "SBAR")),),
    "SINV": (("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VBN", "VP", "S", "SINV", "ADJP", "JJP")),),
    "SQ": (("left", ("VBZ", "VBD", "VBP", "VB", "MD", "AUX", "AUXG", "VP", "SQ")),),
    "UCP": (("right", ()),),
    "VP": (
        (
            "left",
            (
                *("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "AUX", "AUXG"),
                *("ADJP", "JJP", "NN", "NNS", "JJ", "NP", "NNP"),
            ),
        ),
    ),
    "WHADJP": (("left", ("WRB", "WHADVP", "RB", "JJ", "ADJP", "JJP", "JJR")),),
    "WHADVP": (("right", ("WRB", "WHADVP")),),
    "WHNP": (("left", ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),),
    "WHPP": (("right", ("IN", "TO", "FW")),),
    "X": (("right", ("S", "VP", "ADJP", "JJP", "NP", "SBAR", "PP", "X")),),
    "POSSP": (("right", ("POS",)),),
    "ROOT": (("left", ("S", "SQ", "SINV", "SBARQ", "FRAG")),),
    "TOP": (("left", ("S", "SQ", "SINV", "SBARQ", "FRAG")),),
    "META": (("left", ()),),
}

# Punctuation tags: a conjunction right after one does not move the head (see head_child).
PUNCTUATION_TAGS = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "#", "$", "HYPH"})
NOUN_TAGS = ("NN", "NNP", "NNPS", "NNS", "NML", "NX", "POS", "JJR")

FACTORINGS = ("head", "right", "left")

# The label prefix of the nodes binarize_labeled adds inside a binarized node ("@VP").
INTERMEDIATE = "@"


def _first(labels: Sequence[str], direction: str, categories: Sequence[str]) -> int:
    """Index of the head among ``labels`` by one rule; -1 when it finds none."""
    order = range(len(labels)) if direction.startswith("left") else range(len(labels) - 1, -1, -1)
    if not categories:
        return next(iter(order))
    if direction.endswith("dis"):
        # "rightdis"/"leftdis": the first child in that direction of ANY of the categories.
        return next((i for i in order if labels[i] in categories), -1)
    for category in categories:
        for i in order:
            if labels[i] == category:
                return i
    return -1


def _noun_phrase_head(labels: Sequence[str]) -> int:
    """Collins's noun-phrase rule (appendix A, with the Stanford parser's additions)."""
    last = len(labels) - 1
    if labels[last] == "POS":
        return last
    for rule in (
        ("rightdis", NOUN_TAGS),
        ("left", ("NP", "PRP")),
        ("rightdis", ("$", "ADJP", "JJP", "PRN", "FW")),
        ("right", ("CD",)),
        ("rightdis", ("JJ", "JJS", "RB", "QP", "DT", "WDT", "RBR", "ADVP")),
    ):
        found = _first(labels, *rule)
        if found >= 0:
            return found
    return last


def head_child(label: str, child_labels: Sequence[str]) -> int:
    """Index of the head child of a node labeled ``label`` whose children are labeled
    ``child_labels`` (a part-of-speech tag for a word).

    Noun phrases by Collins's noun-phrase rule; other categories by :data:`HEAD_RULES` (rules
    in order; within a rule, each category in turn is searched for in the rule's direction,
    or with "...dis" any of them; no rule matching: the first child in the last rule's
    direction; an unknown category: the first child). Then Collins's coordination rule: a
    head right after a conjunction is the second conjunct, so the first one heads.
    """
    category = _label_of(label)
    labels = [_label_of(child) for child in child_labels]
    if len(labels) == 1:
        return 0
    if category in ("NP", "NX", "NML"):
        head = _noun_phrase_head(labels)
    else:
        rules = HEAD_RULES.get(category, (("left", ()),))
        head = -1
        for rule in rules:
            head = _first(labels, *rule)
            if head >= 0:
                break
        if head < 0:
            # No rule found its categories: the first child in the last rule's direction.
            head = 0 if rules[-1][0].startswith("left") else len(labels) - 1
    # Collins: a head right after a conjunction is the second conjunct; the first one heads
    # ("clothing and helmet"). As in the Stanford parser, not when the word before the
    # conjunction is punctuation ("red , white , and blue" keeps "blue").
    if (
        head >= 2
        and labels[head - 1] in ("CC", "CONJP")
        and labels[head - 2] not in PUNCTUATION_TAGS
    ):
        head -= 2
    return head


def _label_of(text: str) -> str:
    """The category of a label: function tags and indices removed (``NP-SBJ-1`` -> ``NP``,
    ``NP=2`` -> ``NP``); labels that start with "-" (``-LRB-``, ``-NONE-``) kept whole; an
    intermediate node of a binarized tree is its phrase's category (``@VP`` -> ``VP``, see
    :func:`binarize_labeled`)."""
    if text.startswith(INTERMEDIATE) and len(text) > len(INTERMEDIATE):
        text = text[len(INTERMEDIATE) :]
    if text.startswith("-"):
        return text
    for position, character in enumerate(text):
        if character in "-=" and position > 0:
            return text[:position]
    return text


def binarize(tree, factor: str = "head") -> Tree:
    """The unlabeled binary tree (a word, or a pair of trees) of an n-ary labeled tree.

    Unary chains collapse (a one-child node is its child; a part-of-speech node its word); a node
    of three or more children is binarized head-outward (``factor="head"``, the convention of
    SNLI's binary parses; see the module docstring) or by plain ``"right"`` / ``"left"``
    factoring. Leaves are the tree's words as they are. Iterative, so 1,000-word trees are fine.
    """
    if factor not in FACTORINGS:
        raise ValueError(f"factor must be one of {FACTORINGS}, got {factor!r}")

    def join(node, children: list, parts: List[Tree]) -> Tree:
        if not children:
            raise ValueError(f"node {node.label()!r} has no children")
        return _join(node, children, parts, factor)

    return _fold(tree, lambda word: word, join)


def _fold(
    tree, leaf: Callable[[str], Result], combine: Callable[[Any, list, list], Result]
) -> Result:
    """Bottom-up over a labeled tree without recursion (1,000-word trees would pass Python's
    recursion limit): `leaf(word)` for each word, `combine(node, children, parts)` for each
    node, `parts` its children's results in order; the root's result."""
    done: List[Result] = []  # results of finished subtrees, in post-order
    pending: List[Tuple[object, bool]] = [(tree, False)]
    while pending:
        node, children_done = pending.pop()
        if isinstance(node, str):
            done.append(leaf(node))
            continue
        children = list(node)  # type: ignore[call-overload]
        if not children_done:
            pending.append((node, True))
            pending.extend((child, False) for child in reversed(children))
            continue
        parts = done[len(done) - len(children) :]
        del done[len(done) - len(children) :]
        done.append(combine(node, children, parts))
    (result,) = done
    return result


def _join(node, children: list, parts: List[Tree], factor: str) -> Tree:
    if len(parts) == 1:
        return parts[0]
    head = _head(node.label(), children, factor)
    # The head takes its right siblings one at a time, then its left ones from the nearest out.
    joined = parts[head]
    for right in parts[head + 1 :]:
        joined = (joined, right)
    for left in reversed(parts[:head]):
        joined = (left, joined)
    return joined


def binarize_labeled(tree, factor: str = "head"):
    """The labeled binary tree of an n-ary labeled tree, the way the Stanford parser's binarizer
    writes one: a node of three or more children, ``(VP (VBD sat) (PP ...) (. .))``, becomes
    nested two-child nodes in the order :func:`binarize` joins them, the outermost keeping the
    node's label and the ones inside labeled ``@`` + that label: ``(VP (@VP (VBD sat) (PP ...))
    (. .))``. Unary chains and part-of-speech nodes stay as they are, so ``binarize`` of the
    result is ``binarize`` of ``tree`` (and :func:`unbinarize` gives ``tree`` back). Nodes are
    made with ``type(tree)`` (an ``nltk.Tree`` gives ``nltk.Tree`` nodes); iterative."""
    if factor not in FACTORINGS:
        raise ValueError(f"factor must be one of {FACTORINGS}, got {factor!r}")
    make = type(tree)

    def join(node, children: list, parts: list):
        label = node.label()
        if len(parts) <= 2:
            return make(label, parts)
        head = _head(label, children, factor)
        inside = INTERMEDIATE + label
        joined = parts[head]
        joins = len(parts) - 1
        for right in parts[head + 1 :]:
            joins -= 1
            joined = make(inside if joins else label, [joined, right])
        for left in reversed(parts[:head]):
            joins -= 1
            joined = make(inside if joins else label, [left, joined])
        return joined

    return _fold(tree, lambda word: word, join)


def unbinarize(tree):
    """``tree`` with every node labeled ``@...`` (an intermediate node of
    :func:`binarize_labeled`) replaced by its children: the n-ary tree back. Nodes are made
    with ``type(tree)``; a tree without such nodes comes back equal."""
    make = type(tree)

    # Each subtree's result: (whether it is an intermediate node, the nodes it stands for).
    def join(node, children: list, parts: list):
        flat = [item for _, items in parts for item in items]
        label = node.label()
        if label.startswith(INTERMEDIATE) and node is not tree:
            return True, flat
        return False, [make(label, flat)]

    _, (result,) = _fold(tree, lambda word: (False, [word]), join)
    return result


def _head(label: str, children: list, factor: str) -> int:
    """Which child a node of three or more children is binarized around."""
    if factor == "right":
        return len(children) - 1
    if factor == "left":
        return 0
    return head_child(label, [_child_label(child) for child in children])


def _child_label(child) -> str:
    return child if isinstance(child, str) else child.label()


def binary_transitions(tree, factor: str = "head") -> Tuple[List[str], List[int]]:
    """Words and SHIFT/REDUCE transitions of an n-ary labeled tree, binarized by
    :func:`binarize`."""
    return tree_to_transitions(binarize(tree, factor))
