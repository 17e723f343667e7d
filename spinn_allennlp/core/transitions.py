"""Shift-reduce transitions: binary parses <-> tokens + transitions <-> trees.

Pure Python, no torch and no AllenNLP, so readers and tests can use it anywhere.

A binary parse ``( ( the cat ) ( sat down ) )`` becomes the tokens ``the cat sat down`` and
the transitions ``SHIFT SHIFT REDUCE SHIFT SHIFT REDUCE REDUCE``: every word is a SHIFT and
every constituent of two children is a REDUCE, in post-order (paper §3.5). A sentence of N
words always has T = 2N - 1 transitions; a one-word sentence is a single SHIFT.

A tree is either a token (``str``) or a pair ``(left, right)`` of trees.
"""

from typing import List, Optional, Sequence, Tuple, Union

SHIFT = 0
REDUCE = 1
# Padding value for transition tensors: a step that does nothing (the sentence has ended).
PAD = -1

Tree = Union[str, Tuple["Tree", "Tree"]]


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


def check_transitions(transitions: Sequence[int], num_tokens: Optional[int] = None) -> None:
    """Raises :class:`InvalidTransitionsError` unless ``transitions`` build one binary tree
    (over exactly ``num_tokens`` words, when given)."""
    depth = 0
    shifts = 0
    for step, transition in enumerate(transitions):
        if transition == SHIFT:
            depth += 1
            shifts += 1
            if num_tokens is not None and shifts > num_tokens:
                raise InvalidTransitionsError(
                    f"SHIFT at step {step} with an empty buffer ({num_tokens} tokens)"
                )
        elif transition == REDUCE:
            if depth < 2:
                raise InvalidTransitionsError(
                    f"REDUCE at step {step} with {depth} item(s) on the stack"
                )
            depth -= 1
        else:
            raise InvalidTransitionsError(f"unknown transition {transition!r} at step {step}")
    if depth != 1:
        raise InvalidTransitionsError(f"{depth} items left on the stack, expected 1")
    if num_tokens is not None and shifts != num_tokens:
        raise InvalidTransitionsError(f"{shifts} SHIFTs for {num_tokens} tokens")


def is_valid(transitions: Sequence[int], num_tokens: Optional[int] = None) -> bool:
    try:
        check_transitions(transitions, num_tokens)
    except InvalidTransitionsError:
        return False
    return True


def transitions_to_tree(tokens: Sequence[str], transitions: Sequence[int]) -> Tree:
    """Runs the shift-reduce parser symbolically; the inverse of :func:`tree_to_transitions`."""
    check_transitions(transitions, len(tokens))
    stack: List[Tree] = []
    buffer = iter(tokens)
    for transition in transitions:
        if transition == SHIFT:
            stack.append(next(buffer))
        else:
            right = stack.pop()
            left = stack.pop()
            stack.append((left, right))
    return stack[0]


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
    # Shift-reduce over the words with the first `drop` of them absent (None); iterative, so
    # deep trees are no problem.
    stack: List[Optional[Tree]] = []
    words = iter(enumerate(tokens))
    for transition in transitions:
        if transition == SHIFT:
            position, token = next(words)
            stack.append(token if position >= drop else None)
        else:
            right, left = stack.pop(), stack.pop()
            stack.append(right if left is None else left if right is None else (left, right))
    cropped = stack[0]
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


def node_spans(transitions: Sequence[int]) -> List[Tuple[int, int]]:
    """(first word, last word) of the node each step pushes: a SHIFT's word, a REDUCE's whole
    constituent; ``(-1, -1)`` for PAD steps. Two trees over the same words share a constituent
    where their spans are equal."""
    spans: List[Tuple[int, int]] = []
    stack: List[Tuple[int, int]] = []
    word = 0
    for transition in transitions:
        if transition == SHIFT:
            stack.append((word, word))
            word += 1
        elif transition == REDUCE:
            right, left = stack.pop(), stack.pop()
            stack.append((left[0], right[1]))
        else:
            spans.append((-1, -1))
            continue
        spans.append(stack[-1])
    return spans


def constituent_spans(transitions: Sequence[int]) -> List[Tuple[int, int]]:
    """The word spans ``(first, last + 1)`` of the constituents the transitions build, in
    post-order, the whole sentence's included (words are not constituents). PAD steps are
    ignored; so is a REDUCE with fewer than two items on the stack (an invalid sequence gives
    the spans of what it did build)."""
    stack: List[Tuple[int, int]] = []
    spans: List[Tuple[int, int]] = []
    words = 0
    for transition in transitions:
        if transition == SHIFT:
            stack.append((words, words + 1))
            words += 1
        elif transition == REDUCE and len(stack) >= 2:
            right = stack.pop()
            left = stack.pop()
            stack.append((left[0], right[1]))
            spans.append(stack[-1])
    return spans


def bracket_f1(predicted: Sequence[int], gold: Sequence[int]) -> Optional[float]:
    """Unlabeled bracket F1 of the tree ``predicted`` builds against the tree ``gold`` builds,
    over constituents of two or more words other than the whole sentence (which every tree
    has); None when the gold tree has no such constituent (fewer than three words)."""
    num_words = sum(1 for t in gold if t == SHIFT)
    whole = (0, num_words)
    gold_spans = {s for s in constituent_spans(gold) if s != whole}
    if not gold_spans:
        return None
    predicted_spans = {s for s in constituent_spans(predicted) if s != whole}
    common = len(gold_spans & predicted_spans)
    return 2.0 * common / (len(gold_spans) + len(predicted_spans)) if common else 0.0


def labeled_bracket_f1(
    predicted: Sequence[int],
    predicted_types: Sequence[int],
    gold: Sequence[int],
    gold_types: Sequence[int],
) -> Optional[float]:
    """:func:`bracket_f1` where a constituent counts only with the right type too (typed
    REDUCE): ``*_types`` give each step's type (read at REDUCEs)."""
    num_words = sum(1 for t in gold if t == SHIFT)
    whole = (0, num_words)

    def labeled(transitions: Sequence[int], types: Sequence[int]) -> set:
        reduce_types = [k for t, k in zip(transitions, types) if t == REDUCE]
        spans = constituent_spans(transitions)
        return {(s, k) for s, k in zip(spans, reduce_types) if s != whole}

    gold_spans = labeled(gold, gold_types)
    if not gold_spans:
        return None
    predicted_spans = labeled(predicted, predicted_types)
    common = len(gold_spans & predicted_spans)
    return 2.0 * common / (len(gold_spans) + len(predicted_spans)) if common else 0.0
