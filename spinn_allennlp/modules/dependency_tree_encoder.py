"""The interface models use to run a sentence encoder over a dependency tree."""

from typing import Optional

import torch
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_core.child_sum import DependencyOutput


class DependencyTreeEncoder(Seq2VecEncoder):
    """A `Seq2VecEncoder` that composes over a dependency tree, one node per word.

    `forward(inputs, mask, heads=None)` returns the sentence vector (the root word's node) like
    any `Seq2VecEncoder`; `encode` returns a `DependencyOutput` with, on request, every word's
    node state. Models reach it through `modules.tree_encoder.encode` (which passes `heads`),
    never by testing for a class.

    `heads`: shape (batch_size, num_tokens), the position of each word's head in its sentence,
    -1 for the root (and at padding); `mask`: (batch_size, num_tokens), real tokens first.
    """

    def encode(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        heads: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
    ) -> DependencyOutput:
        raise NotImplementedError

    def forward(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        heads: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        return self.encode(inputs, mask, heads).sentence
