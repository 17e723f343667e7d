"""The plain TreeRNN of the SPINN blog post."""

from typing import Optional

import torch
from torch import nn

from spinn_core.compositions.base import Composition
from spinn_core.compositions.registry import register_composition


@register_composition("treernn")
class TreeRNNComposition(Composition):
    """The plain TreeRNN of the SPINN blog post: p = tanh(W [c1; c2; e] + b). Nodes are h only."""

    def __init__(self, hidden_dim: int, extra_dim: int = 0) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.extra_dim = extra_dim
        self.node_dim = hidden_dim
        self.linear = nn.Linear(2 * hidden_dim + extra_dim, hidden_dim)

    def forward(
        self, left: torch.Tensor, right: torch.Tensor, extra: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        features = [left, right] if extra is None else [left, right, extra]
        return torch.tanh(self.linear(torch.cat(features, dim=-1)))

    def leaf(self, extra: torch.Tensor) -> torch.Tensor:
        weight = self.linear.weight[:, 2 * self.hidden_dim :]
        return torch.tanh(nn.functional.linear(extra, weight, self.linear.bias))

    @staticmethod
    def hidden(nodes: torch.Tensor) -> torch.Tensor:
        return nodes
