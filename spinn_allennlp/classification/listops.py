"""ListOps (Nangia and Bowman 2018): nested list expressions over the digits 0-9 whose value is
the label, and whose bracketing is a tree that a model must get right to compute it.

An expression is a digit or a list ``[OP arg ... ]`` with 2-5 arguments, each again an
expression; OP is MIN, MAX, MED (the median, rounded down for an even count) or SM (the sum
modulo 10). ``[MAX 2 [MIN 4 7 ] 0 ]`` = 4. The published files write a list's tokens left to
right (``[MAX``, the arguments, ``]``) with binary brackets that fold the list left to right:
``( ( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 7 ) ] ) ) 0 ) ] )`` — the gold tree the paper's TreeLSTM uses.

The generator of new examples is lab code, outside the package: ``tools/listops_generator.py``.
Pure Python.
"""

from typing import Iterable, Iterator, List, Sequence, Tuple, Union

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
END = "]"
DIGITS = tuple(str(d) for d in range(10))
VOCABULARY = OPERATORS + DIGITS + (END,)

# A digit, or (operator, arguments).
Expression = Union[int, Tuple[str, List["Expression"]]]


def evaluate(expression: Expression) -> int:
    """The value of an expression (the label)."""
    if isinstance(expression, int):
        return expression
    operator, args = expression
    values = [evaluate(arg) for arg in args]
    if operator == "[MIN":
        return min(values)
    if operator == "[MAX":
        return max(values)
    if operator == "[SM":
        return sum(values) % 10
    if operator == "[MED":
        ordered = sorted(values)
        middle = len(ordered) // 2
        if len(ordered) % 2:
            return ordered[middle]
        return (ordered[middle - 1] + ordered[middle]) // 2
    raise ValueError(f"unknown operator {operator!r}")


def tokens(expression: Expression) -> List[str]:
    """``[MAX 2 [MIN 4 7 ] 0 ]`` as a token list."""
    out: List[str] = []
    _append_tokens(expression, out)
    return out


def _append_tokens(expression: Expression, out: List[str]) -> None:
    if isinstance(expression, int):
        out.append(str(expression))
        return
    out.append(expression[0])
    for arg in expression[1]:
        _append_tokens(arg, out)
    out.append(END)


def bracketed(expression: Expression) -> str:
    """The published files' binary bracketing: each list folded left to right,
    ``( ( ( [MAX 2 ) 9 ) ] )``."""
    if isinstance(expression, int):
        return str(expression)
    operator, args = expression
    text = operator
    for item in [bracketed(arg) for arg in args] + [END]:
        text = f"( {text} {item} )"
    return text


def operator_last_bracketed(expression: Expression) -> str:
    """Another binary tree over the same tokens: each list's arguments and its ``]`` folded left
    to right, the operator joined last, ``( [MAX ( ( 2 9 ) ] ) )``. It keeps every list whole, as
    the gold tree does, but reads the operator after the arguments, as the best-draw latent
    parser does for a quarter of its lists (results/listops/README.md): a TreeLSTM on these trees
    measures what that grouping costs."""
    if isinstance(expression, int):
        return str(expression)
    operator, args = expression
    items = [operator_last_bracketed(arg) for arg in args] + [END]
    text = items[0]
    for item in items[1:]:
        text = f"( {text} {item} )"
    return f"( {operator} {text} )"


class MalformedExpressionError(ValueError):
    """Tokens that are not one ListOps expression."""


def parse_tokens(symbols: Sequence[str]) -> Expression:
    """The expression of a token list (brackets ``(`` ``)`` ignored, so a published line's
    bracketed text works as well). Raises :class:`MalformedExpressionError`."""
    items = [s for s in symbols if s not in ("(", ")")]
    if not items:
        raise MalformedExpressionError("no tokens")
    # Each open list: [operator, arguments]; the outermost holder collects the result.
    stack: List[Tuple[str, List[Expression]]] = [("", [])]
    for position, symbol in enumerate(items):
        if symbol in OPERATORS:
            stack.append((symbol, []))
        elif symbol == END:
            if len(stack) == 1:
                raise MalformedExpressionError(f"']' without a list at token {position}")
            operator, args = stack.pop()
            if not args:
                raise MalformedExpressionError(f"empty list {operator} at token {position}")
            stack[-1][1].append((operator, args))
        elif symbol in DIGITS:
            stack[-1][1].append(int(symbol))
        else:
            raise MalformedExpressionError(f"unknown token {symbol!r} at token {position}")
    if len(stack) != 1:
        raise MalformedExpressionError(f"{len(stack) - 1} unclosed list(s)")
    if len(stack[0][1]) != 1:
        raise MalformedExpressionError(f"{len(stack[0][1])} expressions, expected one")
    return stack[0][1][0]


def depth(expression: Expression) -> int:
    """How deep lists nest: 0 for a digit, 1 for a list of digits."""
    if isinstance(expression, int):
        return 0
    return 1 + max(depth(arg) for arg in expression[1])


def format_line(expression: Expression) -> str:
    """A line of the published format: ``label<TAB>bracketed``."""
    return f"{evaluate(expression)}\t{bracketed(expression)}"


def read_lines(lines: Iterable[str]) -> Iterator[Tuple[int, Expression]]:
    """(label, expression) of each ``label<TAB>bracketed`` line (blank lines skipped)."""
    for line in lines:
        if not line.strip():
            continue
        label, text = line.rstrip("\r\n").split("\t", 1)
        yield int(label), parse_tokens(text.split())
