"""The interface models use to ask a sentence encoder for its tree."""

from typing import Optional

import torch
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.core.output import SpinnOutput


class TreeEncoder(Seq2VecEncoder):
    """A `Seq2VecEncoder` that composes over a binary tree and reports it.

    `forward(inputs, mask, transitions=None)` returns the sentence vector like any
    `Seq2VecEncoder`, so a tree encoder drops into any AllenNLP model. A model that knows about
    trees calls `encode` instead and gets a `SpinnOutput`: the sentence vector, the transitions
    followed (gold, the default tree, or the encoder's own parse), the parser's logits when
    `has_parser`, and on request every node's state. Models test for this interface, not for a
    concrete encoder class.

    `transitions`: shape (batch_size, steps), SHIFT = 0 / REDUCE = 1 / PAD = -1, at most
    `2 * num_words - 1` steps per sentence; `mask`: (batch_size, num_tokens), real tokens first.
    """

    @property
    def has_parser(self) -> bool:
        """Whether the encoder predicts transitions (and returns their logits)."""
        return False

    def encode(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
    ) -> SpinnOutput:
        raise NotImplementedError

    def forward(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        return self.encode(inputs, mask, transitions).sentence
