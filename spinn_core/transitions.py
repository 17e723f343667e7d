"""Shift-reduce transitions: binary parses <-> tokens + transitions <-> trees.

Pure Python, no torch and no AllenNLP, so readers and tests can use it anywhere.

A binary parse ``( ( the cat ) ( sat down ) )`` becomes the tokens ``the cat sat down`` and
the transitions ``SHIFT SHIFT REDUCE SHIFT SHIFT REDUCE REDUCE``: every word is a SHIFT and
every constituent of two children is a REDUCE, in post-order (paper §3.5). A sentence of N
words always has T = 2N - 1 transitions; a one-word sentence is a single SHIFT.

A tree is either a token (``str``) or a pair ``(left, right)`` of trees.

Everything that reads a transition sequence (trees, spans, heads, types, tree strings, checks)
is one :func:`fold` over it: SHIFT makes a leaf, REDUCE combines the top two items. Bracket F1
over the constituents it finds is ``tree_scores.py``'s.
"""

from dataclasses import dataclass
from typing import (
    Callable,
    Dict,
    Generic,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

SHIFT = 0
REDUCE = 1
# Padding value for transition tensors: a step that does nothing (the sentence has ended).
PAD = -1

Tree = Union[str, Tuple["Tree", "Tree"]]
# The words ``(first, last + 1)`` a constituent covers.
Span = Tuple[int, int]
Item = TypeVar("Item")


class MalformedParseError(ValueError):
    """A binary parse string that cannot be turned into a binary tree."""


class InvalidTransitionsError(ValueError):
    """A transition sequence that does not describe a binary tree over the tokens."""


def parse_tree(binary_parse: str) -> Tree:
    """Reads a bracketed binary parse into a tree.

    Brackets around a single subtree (``( word )``) are dropped; a bracket with more than two
    children, an unbalanced bracket or an empty parse raises :class:`MalformedParseError`.
    """
    symbols = binary_parse.split()
    if not symbols:
        raise MalformedParseError("empty parse")
    # Each open bracket collects its children; the outermost list is the whole sentence.
    open_brackets: List[List[Tree]] = [[]]
    for position, symbol in enumerate(symbols):
        if symbol == "(":
            open_brackets.append([])
        elif symbol == ")":
            if len(open_brackets) == 1:
                raise MalformedParseError(f"unmatched ')' at symbol {position}")
            children = open_brackets.pop()
            open_brackets[-1].append(_join(children, position))
        else:
            open_brackets[-1].append(symbol)
    if len(open_brackets) != 1:
        raise MalformedParseError(f"{len(open_brackets) - 1} unclosed '('")
    return _join(open_brackets[0], len(symbols))


def _join(children: List[Tree], position: int) -> Tree:
    if len(children) == 1:
        return children[0]
    if len(children) == 2:
        return (children[0], children[1])
    if not children:
        raise MalformedParseError(f"empty brackets '( )' ending at symbol {position}")
    raise MalformedParseError(
        f"constituent with {len(children)} children ending at symbol {position}; "
        "a binary parse has at most two"
    )


def tree_to_transitions(tree: Tree) -> Tuple[List[str], List[int]]:
    """Post-order linearisation: the tree's tokens and its SHIFT/REDUCE sequence."""
    tokens: List[str] = []
    transitions: List[int] = []
    # Iterative post-order so 1000-word right-branching trees don't hit the recursion limit.
    pending: List[Tuple[Tree, bool]] = [(tree, False)]
    while pending:
        node, children_done = pending.pop()
        if isinstance(node, str):
            tokens.append(node)
            transitions.append(SHIFT)
        elif children_done:
            transitions.append(REDUCE)
        else:
            pending.append((node, True))
            pending.append((node[1], False))
            pending.append((node[0], False))
    return tokens, transitions


def parse_to_transitions(binary_parse: str) -> Tuple[List[str], List[int]]:
    """``"( ( the cat ) sat )"`` -> ``(["the", "cat", "sat"], [S, S, R, S, R])``."""
    return tree_to_transitions(parse_tree(binary_parse))


@dataclass
class Folded(Generic[Item]):
    """What :func:`fold` leaves."""

    # The items left on the stack, bottom first: one, the root, for one tree.
    stack: List[Item]
    # Per step, the item it pushed; None for a PAD step (and a skipped invalid one).
    pushed: List[Optional[Item]]
    # The number of SHIFTs done.
    words: int


def fold(
    transitions: Iterable[int],
    leaf: Callable[[int, int], Item],
    node: Callable[[Item, Item, int], Item],
    num_tokens: Optional[int] = None,
    skip_invalid: bool = False,
    allow_pad: bool = True,
) -> Folded[Item]:
    """Runs the shift-reduce stack over ``transitions``, building an item per step: a SHIFT
    pushes ``leaf(word, step)`` (``word`` counts the SHIFTs so far, from 0), a REDUCE pops the
    top two items and pushes ``node(left, right, step)``. Every tree, span, head, type and
    tree string of a transition sequence is such a fold. Iterative: a 1,000-word
    right-branching tree is no deeper for it than a balanced one.

    A PAD step does nothing. An invalid step — a REDUCE with fewer than two items on the stack,
    a SHIFT after ``num_tokens`` words (when given), any other value than SHIFT, REDUCE and PAD,
    or PAD itself unless ``allow_pad`` — raises :class:`InvalidTransitionsError`, or with
    ``skip_invalid`` does nothing, as PAD. The result says what is left on the stack: whether
    that is one tree is the caller's question (see :func:`check_transitions`).
    """
    stack: List[Item] = []
    pushed: List[Optional[Item]] = []
    words = 0
    buffer = float("inf") if num_tokens is None else num_tokens
    for step, transition in enumerate(transitions):
        if transition == SHIFT and words < buffer:
            item = leaf(words, step)
            words += 1
        elif transition == REDUCE and len(stack) >= 2:
            right = stack.pop()
            item = node(stack.pop(), right, step)
        elif (transition == PAD and allow_pad) or skip_invalid:
            pushed.append(None)
            continue
        else:
            raise InvalidTransitionsError(_invalid_step(step, transition, len(stack), num_tokens))
        stack.append(item)
        pushed.append(item)
    return Folded(stack, pushed, words)


def _invalid_step(step: int, transition: int, depth: int, num_tokens: Optional[int]) -> str:
    if transition == SHIFT:
        return f"SHIFT at step {step} with an empty buffer ({num_tokens} tokens)"
    if transition == REDUCE:
        return f"REDUCE at step {step} with {depth} item(s) on the stack"
    return f"unknown transition {transition!r} at step {step}"


def check_transitions(transitions: Sequence[int], num_tokens: Optional[int] = None) -> None:
    """Raises :class:`InvalidTransitionsError` unless ``transitions`` build one binary tree
    (over exactly ``num_tokens`` words, when given). PAD steps are invalid here."""
    folded = fold(transitions, _nothing, _nothing, num_tokens=num_tokens, allow_pad=False)
    if len(folded.stack) != 1:
        raise InvalidTransitionsError(f"{len(folded.stack)} items left on the stack, expected 1")
    if num_tokens is not None and folded.words != num_tokens:
        raise InvalidTransitionsError(f"{folded.words} SHIFTs for {num_tokens} tokens")


def _nothing(*_: object) -> None:
    return None


def is_valid(transitions: Sequence[int], num_tokens: Optional[int] = None) -> bool:
    try:
        check_transitions(transitions, num_tokens)
    except InvalidTransitionsError:
        return False
    return True


def transitions_to_tree(tokens: Sequence[str], transitions: Sequence[int]) -> Tree:
    """Runs the shift-reduce parser symbolically; the inverse of :func:`tree_to_transitions`."""
    check_transitions(transitions, len(tokens))
    return fold(transitions, lambda word, _: tokens[word], _pair).stack[0]


def _pair(left: Tree, right: Tree, _: int) -> Tree:
    return (left, right)


def tree_to_string(tree: Tree) -> str:
    """``(("the", "cat"), "sat")`` -> ``"( ( the cat ) sat )"``, the SNLI binary-parse format."""
    # Iterative, like tree_to_transitions: a 1,000-word right-branching tree is 1,000 deep.
    symbols: List[str] = []
    pending: List[Union[Tree, None]] = [tree]  # None closes a bracket
    while pending:
        node = pending.pop()
        if node is None:
            symbols.append(")")
        elif isinstance(node, str):
            symbols.append(node)
        else:
            symbols.append("(")
            pending += [None, node[1], node[0]]
    return " ".join(symbols)


def transitions_to_string(tokens: Sequence[str], transitions: Sequence[int]) -> str:
    return tree_to_string(transitions_to_tree(tokens, transitions))


def balanced_transitions(num_tokens: int) -> List[int]:
    """Transitions of the balanced binary tree over ``num_tokens`` words (left half gets the
    extra word). The encoder's default tree when it has neither gold transitions nor a parser."""
    if num_tokens < 1:
        return []
    if num_tokens == 1:
        return [SHIFT]
    left = (num_tokens + 1) // 2
    return balanced_transitions(left) + balanced_transitions(num_tokens - left) + [REDUCE]


def left_branching_transitions(num_tokens: int) -> List[int]:
    if num_tokens < 1:
        return []
    return [SHIFT] + [SHIFT, REDUCE] * (num_tokens - 1)


def right_branching_transitions(num_tokens: int) -> List[int]:
    if num_tokens < 1:
        return []
    return [SHIFT] * num_tokens + [REDUCE] * (num_tokens - 1)


# The trees that need no parse, by name: the floors an induced tree's bracket F1 is read against.
FIXED_SHAPES: Dict[str, Callable[[int], List[int]]] = {
    "balanced": balanced_transitions,
    "left-branching": left_branching_transitions,
    "right-branching": right_branching_transitions,
}


def crop_tree_left(tree: Tree, max_tokens: int) -> Tree:
    """Drops words from the left until at most ``max_tokens`` remain, keeping the tree that the
    original induces on the remaining words (constituents that lose a child collapse into the
    other child), so the result is still one binary tree."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    tokens, transitions = tree_to_transitions(tree)
    drop = len(tokens) - max_tokens
    if drop <= 0:
        return tree

    # The tree again with the first `drop` words absent (None): a node that lost a child is its
    # other child.
    def word(position: int, _: int) -> Optional[Tree]:
        return tokens[position] if position >= drop else None

    def join(left: Optional[Tree], right: Optional[Tree], _: int) -> Optional[Tree]:
        return right if left is None else left if right is None else (left, right)

    cropped = fold(transitions, word, join).stack[0]
    assert cropped is not None  # max_tokens >= 1: at least one word is kept
    return cropped


def crop_pad_left(
    tokens: Sequence[str], transitions: Sequence[int], length: int, pad_token: str
) -> Tuple[List[str], List[int]]:
    """The paper's fixed-length mode (§3.5): exactly ``length`` tokens and ``2 * length - 1``
    transitions.

    Long sentences lose words at the left (see :func:`crop_tree_left`; unlike the paper's
    plain crop of the transition sequence, what remains is still a valid tree). Short ones get
    ``pad_token`` SHIFTs at the left: the padding items stay at the bottom of the stack, under
    the sentence's tree, so the stack top after the last step is still the sentence's root.
    The result is then a forest, not one tree; the encoder accepts that for given transitions.
    """
    if length < 1:
        raise ValueError("length must be at least 1")
    tokens = list(tokens)
    transitions = list(transitions)
    if len(tokens) > length:
        tree = crop_tree_left(transitions_to_tree(tokens, transitions), length)
        tokens, transitions = tree_to_transitions(tree)
    num_pad = length - len(tokens)
    padded_tokens = [pad_token] * num_pad + tokens
    # 2 * length - 1 steps: num_pad pad SHIFTs + (2 * n - 1) sentence steps, plus num_pad
    # steps left over. Those are REDUCE-free SHIFT padding in the paper, which would need more
    # tokens; we end with PAD (no-op) steps instead so every SHIFT still has a token.
    padded_transitions = [SHIFT] * num_pad + transitions
    padded_transitions += [PAD] * (2 * length - 1 - len(padded_transitions))
    return padded_tokens, padded_transitions


def step_spans(transitions: Sequence[int], skip_invalid: bool = False) -> List[Optional[Span]]:
    """The words ``(first, last + 1)`` of the node each step pushes: a SHIFT's word, a REDUCE's
    whole constituent; None for PAD steps (and, with ``skip_invalid``, invalid ones: see
    :func:`fold`)."""
    return fold(transitions, _word_span, _join_spans, skip_invalid=skip_invalid).pushed


def _word_span(word: int, _: int) -> Span:
    return (word, word + 1)


def _join_spans(left: Span, right: Span, _: int) -> Span:
    return (left[0], right[1])


def node_spans(transitions: Sequence[int]) -> List[Span]:
    """(first word, last word) of the node each step pushes: a SHIFT's word, a REDUCE's whole
    constituent; ``(-1, -1)`` for PAD steps. Two trees over the same words share a constituent
    where their spans are equal."""
    return [
        (-1, -1) if span is None else (span[0], span[1] - 1) for span in step_spans(transitions)
    ]


def constituent_spans(transitions: Sequence[int]) -> List[Span]:
    """The word spans ``(first, last + 1)`` of the constituents the transitions build, in
    post-order, the whole sentence's included (words are not constituents). PAD steps are
    ignored; so is a REDUCE with fewer than two items on the stack (an invalid sequence gives
    the spans of what it did build)."""
    spans = step_spans(transitions, skip_invalid=True)
    return [span for t, span in zip(transitions, spans) if t == REDUCE and span is not None]
