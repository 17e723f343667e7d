"""Penn Treebank token conventions: the escapes the Stanford parser writes into SNLI's parses
(and SST's trees), and a loose comparison of a parse's words with the raw sentence."""

import re
from typing import Dict, List, Sequence

# Bracket escapes: the escaped token -> the character it stands for.
PTB_BRACKETS: Dict[str, str] = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
}
BRACKET_ESCAPES: Dict[str, str] = {raw: escaped for escaped, raw in PTB_BRACKETS.items()}

# The parser rewrites quotes (" -> `` or '', ' -> ` or ') and keeps some as they are (a stray
# "happy`" stays "`"), so a run of quote marks is compared only as "some quote marks here".
_QUOTE_RUN = re.compile(r"[`'\"]+")
_WHITESPACE = re.compile(r"\s+")


def escape_tokens(tokens: Sequence[str]) -> List[str]:
    """Raw tokens -> PTB tokens: brackets escaped, plain double quotes alternating ``/''."""
    escaped = []
    open_quote = True
    for token in tokens:
        if token == '"':
            escaped.append("``" if open_quote else "''")
            open_quote = not open_quote
        else:
            escaped.append(BRACKET_ESCAPES.get(token, token))
    return escaped


def unescape_tokens(tokens: Sequence[str]) -> List[str]:
    """PTB tokens -> raw brackets (quotes stay as they are)."""
    return [PTB_BRACKETS.get(token, token) for token in tokens]


def comparable(text: str) -> str:
    """``text`` with whitespace removed and runs of quote marks normalised: equal for a
    sentence and the (unescaped) words of its parse."""
    return _QUOTE_RUN.sub('"', _WHITESPACE.sub("", text))


def tokens_match_text(tokens: Sequence[str], text: str) -> bool:
    """Whether PTB ``tokens`` (a parse's words) spell ``text``, up to whitespace and quotes;
    ``text`` may be raw or already PTB-tokenized (SST's sentences write ``-LRB-``)."""
    for escaped, raw in PTB_BRACKETS.items():
        text = text.replace(escaped, raw)
    return comparable(" ".join(unescape_tokens(tokens))) == comparable(text)
