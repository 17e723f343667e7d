"""Labelled bracketed trees in the Penn Treebank's format, ``(S (NP (DT A) (NN dog)) (VP ...))``:
SST's sentiment trees (a 0-4 label on every node) and SNLI's ``sentence1_parse`` (phrase and
part-of-speech labels). Pure Python."""

import re
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Tuple

from spinn_core.transitions import REDUCE, SHIFT

_SYMBOLS = re.compile(r"\(|\)|[^\s()]+")


class MalformedTreeError(ValueError):
    """A bracketed tree that cannot be read. ``reason`` is a short category for counting."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class LabeledTree:
    """A node: its label and either children (a phrase) or a word (a leaf)."""

    label: str
    children: List["LabeledTree"] = field(default_factory=list)
    word: Optional[str] = None

    @property
    def is_leaf(self) -> bool:
        return self.word is not None

    def leaves(self) -> Iterator["LabeledTree"]:
        stack = [self]
        while stack:
            node = stack.pop()
            if node.is_leaf:
                yield node
            else:
                stack.extend(reversed(node.children))

    def post_order(self) -> Iterator["LabeledTree"]:
        """Children before parents, left to right: the order of shift-reduce steps."""
        stack: List[Tuple[LabeledTree, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if node.is_leaf or expanded:
                yield node
            else:
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.children))


def parse_labeled_tree(text: str, leaf_word_separator: str = "_") -> LabeledTree:
    """Reads one bracketed tree. A leaf is ``(label word)``; a leaf of several words (SST writes
    ``(2 8 1\\/2)``) becomes one word joined by ``leaf_word_separator``. Raises
    :class:`MalformedTreeError` for unbalanced brackets, a node without a label, a word outside
    any node or text after the tree."""
    symbols = _SYMBOLS.findall(text)
    if not symbols:
        raise MalformedTreeError("empty tree", "no brackets")
    if symbols[0] != "(":
        raise MalformedTreeError("malformed tree", f"starts with {symbols[0]!r}, not '('")
    # Each open node: [label or None, children, words].
    open_nodes: List[Tuple[List[Optional[str]], List[LabeledTree], List[str]]] = []
    root: Optional[LabeledTree] = None
    for position, symbol in enumerate(symbols):
        if root is not None:
            if symbol == ")":
                raise MalformedTreeError(
                    "unbalanced brackets", f"unmatched ')' at symbol {position}"
                )
            raise MalformedTreeError("malformed tree", f"text after the tree at symbol {position}")
        if symbol == "(":
            if open_nodes and open_nodes[-1][0][0] is None:
                raise MalformedTreeError("node without a label", f"at symbol {position}")
            if open_nodes and open_nodes[-1][2]:
                raise MalformedTreeError("malformed tree", f"words and phrases mixed at {position}")
            open_nodes.append(([None], [], []))
        elif symbol == ")":
            if not open_nodes:
                raise MalformedTreeError(
                    "unbalanced brackets", f"unmatched ')' at symbol {position}"
                )
            (label,), children, words = open_nodes.pop()
            if label is None:
                raise MalformedTreeError(
                    "node without a label", f"empty '( )' at symbol {position}"
                )
            if not children and not words:
                raise MalformedTreeError(
                    "node without a label", f"({label}) at symbol {position} has no content"
                )
            node = (
                LabeledTree(label, word=leaf_word_separator.join(words))
                if words
                else LabeledTree(label, children)
            )
            if open_nodes:
                open_nodes[-1][1].append(node)
            else:
                root = node
        else:
            if not open_nodes:
                raise MalformedTreeError("malformed tree", f"word {symbol!r} outside brackets")
            label_slot, children, words = open_nodes[-1]
            if label_slot[0] is None:
                label_slot[0] = symbol
            elif children:
                raise MalformedTreeError("malformed tree", f"words and phrases mixed at {position}")
            else:
                words.append(symbol)
    if open_nodes:
        raise MalformedTreeError("unbalanced brackets", f"{len(open_nodes)} unclosed '('")
    assert root is not None
    return root


def binary_tree_steps(tree: LabeledTree) -> Tuple[List[str], List[int], List[LabeledTree]]:
    """Tokens, SHIFT/REDUCE transitions and the node pushed at each step, for a tree whose
    phrases all have exactly two children (raises :class:`MalformedTreeError` otherwise)."""
    tokens: List[str] = []
    transitions: List[int] = []
    nodes: List[LabeledTree] = []
    for node in tree.post_order():
        if node.is_leaf:
            assert node.word is not None
            tokens.append(node.word)
            transitions.append(SHIFT)
        elif len(node.children) == 2:
            transitions.append(REDUCE)
        else:
            raise MalformedTreeError(
                "not a binary tree", f"a {node.label!r} node has {len(node.children)} children"
            )
        nodes.append(node)
    return tokens, transitions, nodes
