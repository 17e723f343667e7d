"""A predictor input file with every kind of broken line a user can produce, mixed among good
ones: deliberately broken copies of the real SNLI lines in `fixtures/` (torch-free, plain data).

Each line says what it is and what the predictor must answer: a label (good lines) or an error
containing a given phrase. Blank lines are in the file too; `allennlp predict` skips them
before the predictor sees them, so they have no answer.
"""

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from spinn_core.testing.paths import FIXTURES_ROOT

SNLI_SAMPLE = FIXTURES_ROOT / "pair_classification" / "snli" / "snli_sample.jsonl"
RAW_PAIRS = FIXTURES_ROOT / "pair_classification" / "snli" / "raw_pairs.jsonl"


@dataclass
class HostileLine:
    text: str  # the line as written to the file, without its newline
    kind: str
    # None for a good line (it must get a label); else a phrase its error must contain.
    error: Optional[str]


def _real_examples() -> List[Dict[str, Any]]:
    return [json.loads(line) for line in SNLI_SAMPLE.read_text(encoding="utf-8").splitlines()]


def _raw_pairs() -> List[Dict[str, Any]]:
    return [json.loads(line) for line in RAW_PAIRS.read_text(encoding="utf-8").splitlines()]


def long_parsed_pair(examples: List[Dict[str, Any]], num_words: int) -> Dict[str, str]:
    """A premise of at least ``num_words`` words made of real SNLI sentences one after the other,
    its binary parse their parses joined right-branching; the hypothesis is a real one."""
    sentences: List[str] = []
    parses: List[str] = []
    words = 0
    while words < num_words:
        example = examples[len(sentences) % len(examples)]
        sentences.append(example["sentence1"])
        parses.append(example["sentence1_binary_parse"])
        words += len(example["sentence1_binary_parse"].replace("(", " ").replace(")", " ").split())
    parse = parses[-1]
    for earlier in reversed(parses[:-1]):
        parse = f"( {earlier} {parse} )"
    return {
        "sentence1": " ".join(sentences),
        "sentence2": examples[0]["sentence2"],
        "sentence1_binary_parse": parse,
        "sentence2_binary_parse": examples[0]["sentence2_binary_parse"],
    }


def long_raw_pair(examples: List[Dict[str, Any]], num_words: int) -> Dict[str, str]:
    """Raw text: real premises one after the other until at least ``num_words`` words."""
    sentences: List[str] = []
    while sum(len(s.split()) for s in sentences) < num_words:
        sentences.append(examples[len(sentences) % len(examples)]["sentence1"])
    return {"premise": " ".join(sentences), "hypothesis": examples[1]["sentence2"]}


def _raw(example: Dict[str, Any]) -> Dict[str, Any]:
    return {"premise": example["sentence1"], "hypothesis": example["sentence2"]}


def _insert(text: str, extra: str, rng: random.Random) -> str:
    words = text.split()
    words.insert(rng.randint(0, len(words)), extra)
    return " ".join(words)


def _kinds() -> List[Tuple[str, Optional[str], Callable[[Dict[str, Any], random.Random], str]]]:
    """(kind, expected error phrase or None, make(real SNLI example, rng) -> line)."""
    dump = json.dumps
    # A real line with its premise replaced by `value`.
    premise = lambda value: lambda ex, rng: dump({**_raw(ex), "premise": value})  # noqa: E731
    return [
        # Good lines: labelled.
        ("snli line with parses", None, lambda ex, rng: dump(ex)),
        ("raw pair", None, lambda ex, rng: dump(_raw(ex))),
        (
            "emoji",
            None,
            lambda ex, rng: dump({**_raw(ex), "premise": _insert(ex["sentence1"], "🐶🎉", rng)}),
        ),
        (
            "other scripts",
            None,
            lambda ex, rng: dump(
                {
                    **_raw(ex),
                    "premise": _insert(ex["sentence1"], rng.choice(["狗", "кот", "कुत्ता"]), rng),
                    "hypothesis": _insert(ex["sentence2"], "مرحبا", rng),
                }
            ),
        ),
        (
            "escaped control characters",
            None,
            lambda ex, rng: dump(
                {**_raw(ex), "premise": _insert(ex["sentence1"], "\x07\x00", rng)}
            ),
        ),
        (
            "raw U+2028 and U+0085 inside a sentence",
            None,
            lambda ex, rng: dump(
                {**_raw(ex), "premise": ex["sentence1"].replace(" ", "\u2028", 1) + "\x85"},
                ensure_ascii=False,
            ),
        ),
        (
            "zero-width and combining characters",
            None,
            lambda ex, rng: dump(
                {**_raw(ex), "hypothesis": "\u200b" + ex["sentence2"] + "e\u0301"}
            ),
        ),
        # Bad lines: an error each.
        (
            "truncated JSON",
            "bad JSON",
            lambda ex, rng: (t := dump(ex))[: rng.randint(1, len(t) - 1)],
        ),
        ("not JSON", "bad JSON", lambda ex, rng: ex["sentence1"]),
        ("byte-order mark before the JSON", "bad JSON", lambda ex, rng: "\ufeff" + dump(_raw(ex))),
        (
            "raw control character inside a string",
            "bad JSON",
            lambda ex, rng: dump(
                {**_raw(ex), "premise": ex["sentence1"].replace(" ", "@@CONTROL@@", 1)}
            ).replace("@@CONTROL@@", "\x01"),
        ),
        ("deeply nested JSON", "bad JSON", lambda ex, rng: "[" * 100_000 + "]" * 100_000),
        (
            "JSON list",
            "expected a JSON object, got list",
            lambda ex, rng: dump([ex["sentence1"], ex["sentence2"]]),
        ),
        ("JSON string", "expected a JSON object, got str", lambda ex, rng: dump(ex["sentence1"])),
        ("JSON null", "expected a JSON object, got NoneType", lambda ex, rng: "null"),
        ("premise a number", "premise must be a string, got int", premise(42)),
        ("premise NaN", "premise must be a string, got float", lambda ex, rng: '{"premise": NaN}'),
        ("premise a list", "premise must be a string, got list", premise(["Two", "dogs"])),
        ("premise an object", "premise must be a string, got dict", premise({"text": "x"})),
        (
            "hypothesis a boolean",
            "hypothesis must be a string, got bool",
            lambda ex, rng: dump({**_raw(ex), "hypothesis": True}),
        ),
        (
            "hypothesis missing",
            "missing field: sentence2 or hypothesis",
            lambda ex, rng: dump({"premise": ex["sentence1"]}),
        ),
        ("empty premise", "premise is empty", premise("")),
        ("whitespace-only premise", "premise is empty", premise(" \t\n\u3000 ")),
        ("lone surrogate", "invalid text", premise("\ud800 dogs")),
        # A Latin-1 byte (0xE9, "é") in a UTF-8 file: written as the surrogate U+DCE9 through
        # errors="surrogateescape" (write_hostile_file), it is the raw byte in the file.
        (
            "a byte that is not UTF-8",
            "not UTF-8: byte 0xe9",
            lambda ex, rng: dump(_raw(ex)).replace('": "', '": "caf\udce9 ', 1),
        ),
        (
            "parse that doesn't match its text",
            "parse tokens don't match the sentence",
            lambda ex, rng: dump({**ex, "sentence1": ex["sentence2"]}),
        ),
        (
            "unbalanced parse",
            "malformed parse",
            lambda ex, rng: dump(
                {**ex, "sentence1_binary_parse": ex["sentence1_binary_parse"][2:]}
            ),
        ),
        (
            "one parse only",
            "missing field",
            lambda ex, rng: dump({k: v for k, v in ex.items() if k != "sentence2_binary_parse"}),
        ),
    ]


def hostile_lines(count: int = 2000, seed: int = 0, num_long: int = 3) -> List[HostileLine]:
    """``count`` lines (blank ones included) cycling through every kind above, each made from a
    real SNLI line; plus ``num_long`` 1,000-word raw premises and ``num_long`` 1,000-word
    parsed ones (good lines) and a few blank lines, at random places."""
    rng = random.Random(seed)
    examples = _real_examples()
    kinds = _kinds()
    lines = []
    for i in range(count - 2 * num_long - 3):
        kind, error, make = kinds[i % len(kinds)]
        lines.append(HostileLine(make(rng.choice(examples), rng), kind, error))
    for _ in range(num_long):
        lines.append(HostileLine(json.dumps(long_raw_pair(examples, 1000)), "1,000 words", None))
        parsed = long_parsed_pair(examples, 1000)
        lines.append(HostileLine(json.dumps(parsed), "1,000 words, parsed", None))
    for blank in ("", "   ", "\t"):
        lines.append(HostileLine(blank, "blank line", None))
    rng.shuffle(lines)
    return lines


def write_hostile_file(path: Path, lines: List[HostileLine]) -> None:
    # newline="\n": exactly these lines, on every platform; a line's lone surrogates
    # U+DC80-U+DCFF are written as the raw bytes they stand for (bytes that are not UTF-8).
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as file:
        for line in lines:
            file.write(line.text + "\n")


def is_blank(line: HostileLine) -> bool:
    """Whether the line is blank as `allennlp predict` tests it (``line.isspace()``): AllenNLP's
    own command drops it; with our predictors it is answered with the error "blank line"."""
    return (line.text + "\n").isspace()


__all__ = [
    "HostileLine",
    "hostile_lines",
    "write_hostile_file",
    "is_blank",
    "long_parsed_pair",
    "long_raw_pair",
    "SNLI_SAMPLE",
    "RAW_PAIRS",
]
