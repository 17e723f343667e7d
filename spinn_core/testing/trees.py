"""Random trees and padded batches for tests and benchmarks (torch only)."""

import random
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import torch

from spinn_core.policies import Given
from spinn_core.spinn import Spinn
from spinn_core.transitions import (
    PAD,
    REDUCE,
    SHIFT,
    Tree,
    fold,
    tree_to_transitions,
)


def random_tree(words: Sequence[str], rng: random.Random) -> Tree:
    """A binary tree over ``words`` (at least one) with uniformly random split points."""
    if len(words) == 1:
        return words[0]
    split = rng.randint(1, len(words) - 1)
    return (random_tree(words[:split], rng), random_tree(words[split:], rng))


def random_transitions(num_words: int, rng: random.Random) -> List[int]:
    """The transitions of a random binary tree over ``num_words`` words (none for 0 words)."""
    if num_words == 0:
        return []
    return tree_to_transitions(random_tree([str(i) for i in range(num_words)], rng))[1]


def pad_batch(sequences: Sequence[Sequence[int]], value: int, width: int = 0) -> torch.Tensor:
    """Shape (len(sequences), max(width, longest)): the sequences padded with ``value``."""
    width = max([width] + [len(s) for s in sequences])
    return torch.tensor(
        [list(s) + [value] * (width - len(s)) for s in sequences], dtype=torch.long
    ).view(len(sequences), width)


def tree_height(transitions: Sequence[int]) -> int:
    """Height of the (top) tree the transitions build: 0 for a single word."""
    heights = fold(transitions, lambda word, _: 0, lambda left, right, _: 1 + max(left, right))
    return max(heights.stack, default=0)


@dataclass
class TreeBatch:
    """A padded batch of random sentences with random binary trees."""

    inputs: torch.Tensor  # (B, N, D) word vectors N(0, 1), zeros after each sentence
    mask: torch.Tensor  # (B, N) bool, True on real words
    transitions: torch.Tensor  # (B, max(1, 2N - 1)) SHIFT/REDUCE, PAD after each sentence
    lengths: torch.Tensor  # (B,) long
    trees: List[Optional[Tree]]  # leaves are str(word index); None for an empty sentence

    def __len__(self) -> int:
        return len(self.trees)

    def to(self, device: Union[str, torch.device]) -> "TreeBatch":
        return TreeBatch(
            self.inputs.to(device),
            self.mask.to(device),
            self.transitions.to(device),
            self.lengths.to(device),
            self.trees,
        )

    def head(self, count: int) -> "TreeBatch":
        """The first ``count`` sentences, re-padded to their own longest."""
        width = max(1, int(self.lengths[:count].max()))
        return TreeBatch(
            self.inputs[:count, :width],
            self.mask[:count, :width],
            self.transitions[:count, : max(1, 2 * width - 1)],
            self.lengths[:count],
            self.trees[:count],
        )


def random_tree_batch(
    lengths: Sequence[int],
    dim: int,
    rng: random.Random,
    device: Union[str, torch.device] = "cpu",
    dtype: torch.dtype = torch.float32,
    generator: Optional[torch.Generator] = None,
) -> TreeBatch:
    """Random word vectors (drawn from ``generator``, or torch's global generator) and random
    binary trees (from ``rng``) for sentences of ``lengths`` words; 0 is an empty sentence."""
    width = max(1, max(lengths))
    inputs = torch.randn(len(lengths), width, dim, dtype=dtype, generator=generator)
    lengths_tensor = torch.tensor(list(lengths), dtype=torch.long)
    mask = torch.arange(width).unsqueeze(0) < lengths_tensor.unsqueeze(1)
    inputs = inputs * mask.unsqueeze(-1)  # padding is zero, as AllenNLP gives it
    trees: List[Optional[Tree]] = []
    sequences = []
    for length in lengths:
        tree = random_tree([str(i) for i in range(length)], rng) if length else None
        trees.append(tree)
        sequences.append(tree_to_transitions(tree)[1] if tree is not None else [])
    transitions = pad_batch(sequences, PAD, width=max(1, 2 * width - 1))
    return TreeBatch(
        inputs.to(device), mask.to(device), transitions.to(device), lengths_tensor.to(device), trees
    )


def make_batch(
    lengths: Sequence[int],
    input_dim: int,
    rng: random.Random,
    device: Union[str, torch.device] = "cpu",
    dtype: torch.dtype = torch.float32,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(inputs, mask, transitions)`` of :func:`random_tree_batch`."""
    batch = random_tree_batch(lengths, input_dim, rng, device, dtype)
    return batch.inputs, batch.mask, batch.transitions


def random_heads(num_words: int, rng: random.Random) -> List[int]:
    """A random dependency tree over ``num_words`` words: each word's head position, -1 for the
    root. Words join the tree in random order, each under a random word already in it, so any
    branching factor and non-projective trees occur."""
    order = list(range(num_words))
    rng.shuffle(order)
    heads = [-1] * num_words
    for joined, word in enumerate(order[1:], start=1):
        heads[word] = order[rng.randrange(joined)]
    return heads


def all_trees(num_words: int) -> Iterator[List[int]]:
    """Every binary tree over ``num_words`` words, as transitions."""

    def extend(prefix: List[int], depth: int, shifted: int) -> Iterator[List[int]]:
        if shifted == num_words and depth == 1:
            yield prefix
            return
        if shifted < num_words:
            yield from extend(prefix + [SHIFT], depth + 1, shifted + 1)
        if depth >= 2:
            yield from extend(prefix + [REDUCE], depth - 1, shifted)

    return extend([], 0, 0)


def tree_log_prob(model: Spinn, inputs, mask, tree: List[int]) -> float:
    """log p(tree) under the parser: the legal moves' log-softmax along the tree, a forced
    move counting 0, from the logits of a pass that follows the tree."""
    with torch.no_grad():
        given = model(inputs, mask, torch.tensor([tree]), policy=Given())
    num_words = int(mask.sum())
    total, depth, shifted = 0.0, 0, 0
    for t, action in enumerate(tree):
        if shifted < num_words and depth >= 2:
            total += float(torch.log_softmax(given.transition_logits[0, t], dim=-1)[action])
        depth += 1 if action == SHIFT else -1
        shifted += action == SHIFT
    return total
