"""Trees for people to read."""

from itertools import takewhile
from typing import Iterable, Sequence

from spinn_core.transitions import PAD, is_valid, transitions_to_string


def readable_tree(
    tokens: Sequence[str], transitions: Iterable[int], left_pad_token: str = ""
) -> str:
    """The bracketed tree ``( ( the cat ) sat )`` that ``transitions`` build over ``tokens``
    (PAD steps ignored; "" for no tokens).

    In the paper's left-padded mode the first tokens are ``left_pad_token`` SHIFTs under the
    sentence's tree: the sentence's own tree is shown. (A parser that followed its own
    predictions may have merged pad items into it: then the whole tree is shown.)
    """
    sequence = [int(t) for t in transitions if int(t) != PAD]
    tokens = list(tokens)
    num_pad = len(list(takewhile(lambda t: t == left_pad_token, tokens))) if left_pad_token else 0
    if num_pad and is_valid(sequence[num_pad:], len(tokens) - num_pad):
        tokens, sequence = tokens[num_pad:], sequence[num_pad:]
    return transitions_to_string(tokens, sequence) if tokens else ""
