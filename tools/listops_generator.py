"""The ListOps generator (lab code: it made our training and development data and the length
sets; the language itself, which the reader needs, is ``spinn_allennlp.classification.listops``).

``generate_dataset`` writes new examples from the distribution of the published test set
(``test_d20s.tsv``, 10,000 lines; measured by ``statistics`` and checked in
``tests/classification/test_listops.py``): the top node a list, every argument a list with
probability 1/4 and a digit otherwise, 2-5 arguments and the operator uniform, digits uniform,
no node deeper than 20 (the top list is at depth 1, so lists nest at most 19 deep and
arguments at depth 20 are digits), and every example distinct, drawn
from a pool of 100,000 distinct expressions of which the test set is a tenth. Pure Python.
"""

import bisect
import random
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set

from spinn_allennlp.classification.listops import (
    DIGITS,
    END,
    OPERATORS,
    Expression,
    depth,
    evaluate,
    parse_tokens,
    tokens,
)


@dataclass(frozen=True)
class GeneratorSettings:
    """The generating process; the defaults reproduce ``test_d20s.tsv``.

    ``list_probability``: chance that an argument is a list rather than a digit (measured from
    the test file: 82,144 argument lists among 326,308 arguments = 0.252). ``max_depth``: no
    node is deeper (the top list is at depth 1; the test file's lists nest at most 19 deep, and
    324 of its 10,000 examples reach that). ``pool_size``: the published data was a
    set of distinct expressions, so short ones, which repeat often, are rarer than drawn; a
    sample of a pool this size (train + test of the original) has the test file's statistics.
    """

    list_probability: float = 0.25
    min_args: int = 2
    max_args: int = 5
    max_depth: int = 20
    pool_size: int = 100_000


def random_tokens(
    rng: random.Random, settings: GeneratorSettings = GeneratorSettings()
) -> List[str]:
    """The tokens of one random expression, its top node a list."""
    out: List[str] = []
    draw, randint = rng.random, rng.randint

    def add_list(depth: int) -> None:
        start = len(out)
        out.append("")  # the operator, drawn once the arguments are
        for _ in range(randint(settings.min_args, settings.max_args)):
            if depth + 1 < settings.max_depth and draw() < settings.list_probability:
                add_list(depth + 1)
            else:
                out.append(DIGITS[int(draw() * 10)])
        out[start] = rng.choice(OPERATORS)
        out.append(END)

    add_list(1)
    return out


class _TooLong(Exception):
    """An expression grew past the length asked for: drawn no further."""


def random_tokens_below(
    rng: random.Random, limit: int, settings: GeneratorSettings = GeneratorSettings()
) -> Optional[List[str]]:
    """The tokens of one random expression as :func:`random_tokens` draws it, or None as soon
    as it has ``limit`` tokens without being complete (the rest is not drawn: what makes
    rejection sampling of long expressions affordable)."""
    out: List[str] = []
    draw, randint = rng.random, rng.randint

    def add_list(depth: int) -> None:
        start = len(out)
        out.append("")
        for _ in range(randint(settings.min_args, settings.max_args)):
            if len(out) >= limit:
                raise _TooLong
            if depth + 1 < settings.max_depth and draw() < settings.list_probability:
                add_list(depth + 1)
            else:
                out.append(DIGITS[int(draw() * 10)])
        out[start] = rng.choice(OPERATORS)
        out.append(END)

    try:
        add_list(1)
    except _TooLong:
        return None
    return out if len(out) < limit else None


def length_bin_sample(
    count: int,
    shortest: int,
    longest: int,
    seed: int,
    settings: GeneratorSettings = GeneratorSettings(),
) -> List[Expression]:
    """``count`` distinct expressions whose length (tokens, brackets not counted) lies strictly
    between ``shortest`` and ``longest``, drawn from ``settings``' process by rejection, in
    the order drawn: the length-generalisation test sets of Havrylov et al. (2019), whose
    script keeps a draw when ``shortest < length < longest`` (operators MIN, MAX, MED, SM;
    lists with probability 0.25, 2-5 arguments, depth at most 20 — the defaults). Deterministic
    for a seed."""
    rng = random.Random(seed)
    seen: Set[str] = set()
    kept: List[Expression] = []
    while len(kept) < count:
        drawn = random_tokens_below(rng, longest, settings)
        if drawn is None or len(drawn) <= shortest:
            continue
        key = " ".join(drawn)
        if key not in seen:
            seen.add(key)
            kept.append(parse_tokens(drawn))
    return kept


def random_expression(
    rng: random.Random, settings: GeneratorSettings = GeneratorSettings()
) -> Expression:
    """One random expression, its top node a list."""
    return parse_tokens(random_tokens(rng, settings))


def generate_pool(
    rng: random.Random,
    settings: GeneratorSettings = GeneratorSettings(),
    exclude: Iterable[str] = (),
) -> List[str]:
    """Token strings of ``settings.pool_size`` distinct expressions, less those in ``exclude``
    (token strings, which count towards the pool as the test set did in the original)."""
    excluded: Set[str] = set(exclude)
    seen: Set[str] = set(excluded)
    pool: List[str] = []
    while len(pool) + len(excluded) < settings.pool_size:
        key = " ".join(random_tokens(rng, settings))
        if key not in seen:
            seen.add(key)
            pool.append(key)
    return pool


def generate_dataset(
    sizes: Sequence[int],
    seed: int,
    settings: GeneratorSettings = GeneratorSettings(),
    exclude: Iterable[str] = (),
) -> List[List[Expression]]:
    """Disjoint random samples of the given sizes from one pool (e.g. train and dev), none in
    ``exclude`` (token strings, e.g. the test set's)."""
    rng = random.Random(seed)
    pool = generate_pool(rng, settings, exclude)
    if sum(sizes) > len(pool):
        raise ValueError(f"{sum(sizes)} examples asked of a pool of {len(pool)}")
    chosen = rng.sample(pool, sum(sizes))
    splits, start = [], 0
    for size in sizes:
        splits.append([parse_tokens(key.split()) for key in chosen[start : start + size]])
        start += size
    return splits


def statistics(expressions: Sequence[Expression]) -> Dict[str, Counter]:
    """Counts that describe a sample: ``length`` (tokens), ``depth``, ``args`` (arguments per
    list), ``operator``, ``digit`` (digit arguments), ``label`` and ``root`` (the top node's
    operator, or "digit")."""
    counts: Dict[str, Counter] = {
        key: Counter() for key in ("length", "depth", "args", "operator", "digit", "label", "root")
    }
    for expression in expressions:
        counts["length"][len(tokens(expression))] += 1
        counts["depth"][depth(expression)] += 1
        counts["label"][evaluate(expression)] += 1
        counts["root"]["digit" if isinstance(expression, int) else expression[0]] += 1
        pending = [expression]
        while pending:
            node = pending.pop()
            if isinstance(node, int):
                counts["digit"][node] += 1
                continue
            counts["operator"][node[0]] += 1
            counts["args"][len(node[1])] += 1
            pending.extend(node[1])
    return counts


def binned(counts: Counter, edges: Sequence[int]) -> List[int]:
    """Counts of a numeric statistic in the bins ``[edges[i], edges[i + 1])``, the last bin
    open-ended: ``binned(lengths, [0, 10, 20])`` -> [< 10, 10-19, >= 20]."""
    bins = [0] * len(edges)
    for value, count in counts.items():
        bins[max(0, bisect.bisect_right(edges, value) - 1)] += count
    return bins
