"""Reference implementations the batched core is checked against (and benchmarked with)."""

from typing import Sequence, Tuple

import torch

from spinn_allennlp.core.cells import TreeLSTMComposition
from spinn_allennlp.core.spinn import Spinn
from spinn_allennlp.core.transitions import Tree


def recursive_tree_lstm(model: Spinn, words: torch.Tensor, tree: Tree) -> torch.Tensor:
    """The conventional TreeLSTM: one sentence, one node at a time, recursively, with eq. 1-4
    written out directly from ``model``'s own parameters (SPINN-PI-NT, no dropout or batch
    norm). ``words``: (n, input_dim) vectors of the sentence's words; leaves of ``tree`` are
    ``str(word index)``. Returns h of the root, shape (hidden_dim,)."""
    if not isinstance(model.compose, TreeLSTMComposition) or model.tracker is not None:
        raise ValueError("the recursive reference is the TreeLSTM without tracking")
    projection = model.projection.linear
    W, b = model.compose.linear.weight, model.compose.linear.bias
    D = model.hidden_dim

    def node(subtree: Tree) -> Tuple[torch.Tensor, torch.Tensor]:
        if isinstance(subtree, str):
            hc = projection(words[int(subtree)])
            return hc[:D], hc[D:]
        (h_l, c_l), (h_r, c_r) = node(subtree[0]), node(subtree[1])
        z = W @ torch.cat([h_l, h_r]) + b
        i, f_l, f_r, o, g = z.split(D)
        c = torch.sigmoid(f_l) * c_l + torch.sigmoid(f_r) * c_r + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c

    return node(tree)[0]


def recursive_encode(model: Spinn, inputs: torch.Tensor, trees: Sequence[Tree]) -> torch.Tensor:
    """Shape (B, hidden_dim): :func:`recursive_tree_lstm` over each sentence in turn."""
    return torch.stack(
        [recursive_tree_lstm(model, inputs[b], tree) for b, tree in enumerate(trees)]
    )
