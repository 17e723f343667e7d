"""Every node of a tree as a sequence, so attention models can attend over phrases."""

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Union

import torch
from allennlp.common import Registrable
from torch import nn

from spinn_allennlp.modules.tree_encoder import with_default_trees
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core.policies import Given
from spinn_core.spinn import Spinn
from spinn_core.transitions import PAD, SHIFT


@dataclass
class TreeNodes:
    """The nodes of a batch of binary trees in post-order (leaves and constituents: 2n - 1 for
    a sentence of n words), one node per transition, padding after each sentence's last."""

    # Shape: (batch_size, num_nodes, output_dim). h of each node; zeros at padding.
    states: torch.Tensor
    # Shape: (batch_size, num_nodes), bool. True on real nodes.
    mask: torch.Tensor
    # Shape: (batch_size, num_nodes). SHIFT (0) where the node is a leaf (a word, in order),
    # REDUCE (1) where it is a constituent of the two nodes before it on the stack, PAD (-1).
    transitions: torch.Tensor
    # Shape: (batch_size, output_dim). h of each tree's root (the last real node).
    roots: torch.Tensor

    def split(self, sizes: Sequence[int]) -> List["TreeNodes"]:
        """The nodes of consecutive groups of ``sizes`` trees (e.g. premises, then hypotheses,
        encoded in one call), each cut to its own longest tree: what encoding each group alone
        returns."""
        groups = []
        for states, mask, transitions, roots in zip(
            self.states.split(sizes),
            self.mask.split(sizes),
            self.transitions.split(sizes),
            self.roots.split(sizes),
        ):
            width = int(mask.sum(dim=1).max()) if mask.size(0) else 0
            groups.append(
                TreeNodes(states[:, :width], mask[:, :width], transitions[:, :width], roots)
            )
        return groups


class TreeNodeEncoder(nn.Module, Registrable):
    """Like a `Seq2SeqEncoder`, but the output sequence is the nodes of a binary tree over the
    input (2n - 1 vectors for n words, with their own mask), not one vector per word.

    `forward(inputs, mask, transitions=None)` encodes words: `inputs` (batch_size, num_words,
    input_dim), `mask` (batch_size, num_words) with real words first, `transitions`
    (batch_size, steps) SHIFT/REDUCE/PAD (the balanced tree when `None`).
    `encode_node_inputs(node_inputs, transitions)` gives every node an input vector of its own,
    `node_inputs` (batch_size, steps, input_dim) in the post-order of `transitions`: a tree
    layer on top of an earlier one with the same trees (Chen et al. 2017's inference
    composition). Both return `TreeNodes`.
    """

    default_implementation = "spinn"

    def get_input_dim(self) -> int:
        raise NotImplementedError

    def get_output_dim(self) -> int:
        raise NotImplementedError

    def forward(
        self, inputs: torch.Tensor, mask: torch.Tensor, transitions: Optional[torch.Tensor] = None
    ) -> TreeNodes:
        raise NotImplementedError

    def encode_node_inputs(self, node_inputs: torch.Tensor, transitions: torch.Tensor) -> TreeNodes:
        raise NotImplementedError


@TreeNodeEncoder.register("spinn")
class SpinnTreeNodeEncoder(TreeNodeEncoder):
    """The syntactic tree-LSTM of Chen et al. (2017, eq. 3-10) on SPINN's batched core: every
    node is the binary TreeLSTM cell of its two children (none for a leaf) and an input vector
    of its own. In `forward` a leaf's input is its word vector and a constituent's a learned
    "no word" vector (their §3.1: "a special vector ... like an unknown word"); in
    `encode_node_inputs` every node takes the vector given for it.

    Given trees only (no tracking, no parser), so the nodes are composed one tree level at a
    time across the batch (`levelwise`), or step by step on the thin stack; both give the same
    nodes.

    Registered as a `TreeNodeEncoder` with name "spinn".

    # Parameters

    input_dim : `int`
        Size of the words' (and nodes') input vectors.
    hidden_dim : `int`
        Size of a node's h (and c): the output size.
    leaf : `str`, optional (default = `"cell"`)
        `"cell"`: a leaf is the cell with zero children and its word as input (eq. 3-10);
        `"projection"`: SPINN's learned linear map of the word into (h, c) (Bowman et al.,
        eq. 4).
    learned_constituent_input : `bool`, optional (default = `True`)
        Learn the "no word" input of constituents used by `forward`; `False`: zeros (use this
        for a layer that is only ever called through `encode_node_inputs`, whose constituents
        have inputs of their own).
    composition : `str` or `Dict[str, Any]`, optional (default = `"treelstm"`)
        A registered composition, by name or `{"type": name, ...}` (see `"spinn"` encoder).
    levelwise : `bool`, optional (default = `True`)
        Compose one tree level at a time; `False`: step by step on the thin stack.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        leaf: str = "cell",
        learned_constituent_input: bool = True,
        composition: Union[str, Dict[str, Any]] = "treelstm",
        levelwise: bool = True,
    ) -> None:
        super().__init__()
        with configuration_errors():
            self.spinn = Spinn(
                input_dim,
                hidden_dim,
                composition=composition,
                levelwise=levelwise,
                node_input_dim=input_dim,
                leaf=leaf,
            )
        self.constituent_input = (
            nn.Parameter(torch.randn(input_dim) / math.sqrt(input_dim))
            if learned_constituent_input
            else None
        )

    def get_input_dim(self) -> int:
        return self.spinn.input_dim

    def get_output_dim(self) -> int:
        return self.spinn.hidden_dim

    def forward(
        self, inputs: torch.Tensor, mask: torch.Tensor, transitions: Optional[torch.Tensor] = None
    ) -> TreeNodes:
        batch_size, num_words = mask.shape
        num_steps = max(1, 2 * num_words - 1)
        if self.constituent_input is not None:
            constituent = self.constituent_input.to(inputs.dtype)
        else:
            constituent = inputs.new_zeros(self.get_input_dim())
        # Shape: (batch_size, steps, input_dim); only the REDUCE steps' rows are read.
        node_inputs = constituent.expand(batch_size, num_steps, -1)
        # Sentences without a tree in a batch with trees get the balanced default tree.
        return self._encode(inputs, mask, with_default_trees(transitions, mask), node_inputs)

    def encode_node_inputs(self, node_inputs: torch.Tensor, transitions: torch.Tensor) -> TreeNodes:
        # The k-th SHIFT of a row is its k-th word: gather the leaves' inputs into word order.
        # Shape: (batch_size, steps)
        transitions = transitions[:, : node_inputs.size(1)].long()
        is_shift = transitions == SHIFT
        lengths = is_shift.sum(dim=1)
        num_words = int(lengths.max()) if lengths.numel() else 0
        # Shape: (batch_size, num_words)
        mask = torch.arange(num_words, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)
        _, steps = is_shift.nonzero(as_tuple=True)
        word_steps = torch.zeros_like(mask, dtype=torch.long)
        word_steps[mask] = steps  # row-major order of both: word k of row b <- its SHIFT step
        # Shape: (batch_size, num_words, input_dim); padding positions are never read.
        words = node_inputs.gather(1, word_steps.unsqueeze(-1).expand(-1, -1, node_inputs.size(-1)))
        return self._encode(words, mask, transitions, node_inputs)

    def _encode(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor],
        node_inputs: torch.Tensor,
    ) -> TreeNodes:
        output = self.spinn(
            inputs, mask, transitions, policy=Given(), return_nodes=True, node_inputs=node_inputs
        )
        states = output.node_hidden
        if states is None:  # an empty batch
            states = inputs.new_zeros(0, 0, self.get_output_dim())
        return TreeNodes(
            states=states,
            mask=output.transitions != PAD,
            transitions=output.transitions,
            roots=output.sentence,
        )
