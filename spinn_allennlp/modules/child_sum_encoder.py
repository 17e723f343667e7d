from typing import Optional

import torch
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder
from torch import nn

from spinn_allennlp.modules.dependency_tree_encoder import DependencyTreeEncoder
from spinn_allennlp.modules.input_checks import word_mask
from spinn_core.child_sum import ChildSumTreeLSTM, DependencyOutput


@Seq2VecEncoder.register("child_sum_tree_lstm")
class ChildSumTreeLSTMEncoder(DependencyTreeEncoder):
    """The Child-Sum Tree-LSTM of Tai et al. (2015, §3.1) over dependency trees (their
    "Dependency Tree-LSTM"): each word's node combines the word's vector with the sum of its
    dependents' states, one forget gate per dependent; the sentence vector is the root word's h.
    Computed level by level over the batch (`spinn_core/child_sum.py`).

    Which tree: the `heads` passed to `forward`/`encode` (readers make them from constituency
    trees with `HeadRules`); without them the chain in which each word heads the one before it,
    on which the unit is a left-to-right LSTM, so `"type": "child_sum_tree_lstm"` also works in
    configs that know nothing of trees.

    Input shape: (batch_size, num_tokens, input_dim) with a mask of real tokens first (`None`:
    every position is a word); output shape: (batch_size, hidden_dim). `encode` returns the whole
    `DependencyOutput`.

    Registered as a `Seq2VecEncoder` with name "child_sum_tree_lstm".

    # Parameters

    input_dim : `int`
        Size of the word vectors.
    hidden_dim : `int`
        Size of a node's h (and c): the output size.
    input_dropout : `float`, optional (default = `0.0`)
        Drop rate on the word vectors, before the unit.
    """

    def __init__(self, input_dim: int, hidden_dim: int, input_dropout: float = 0.0) -> None:
        super().__init__()
        self.tree_lstm = ChildSumTreeLSTM(input_dim, hidden_dim)
        self.input_dropout = nn.Dropout(input_dropout)

    def get_input_dim(self) -> int:
        return self.tree_lstm.input_dim

    def get_output_dim(self) -> int:
        return self.tree_lstm.hidden_dim

    def encode(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        heads: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
    ) -> DependencyOutput:
        mask = word_mask(self, inputs, mask)
        return self.tree_lstm(self.input_dropout(inputs), mask, heads, return_nodes=return_nodes)
