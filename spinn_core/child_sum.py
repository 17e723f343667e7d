"""The Child-Sum Tree-LSTM (Tai et al. 2015, §3.1) over dependency trees, batched level by level.

A dependency tree has one node per word: word j's node takes the word's vector x_j as input and
the states of its dependents (children, any number, unordered):

    h~_j = sum_k h_k                                  (eq. 2)
    i_j  = sigmoid(W_i x_j + U_i h~_j + b_i)           (eq. 3)
    f_jk = sigmoid(W_f x_j + U_f h_k + b_f)            (eq. 4, one forget gate per child)
    o_j  = sigmoid(W_o x_j + U_o h~_j + b_o)           (eq. 5)
    u_j  = tanh(W_u x_j + U_u h~_j + b_u)              (eq. 6)
    c_j  = i_j * u_j + sum_k f_jk * c_k                (eq. 7)
    h_j  = o_j * tanh(c_j)                             (eq. 8)

The sentence vector is h of the root word. A tree is given as ``heads``: for each word the
position of its head word in the sentence, -1 for the root.

Batching, as the level-wise SPINN-PI-NT (``levelwise.py``) and DGL's Tree-LSTM: a node depends
only on its children, so every node of the same height (leaves 0, a head 1 + its highest
dependent), across the batch, is computed in one call; the loop runs (max tree height + 1)
times. W x for every word is one matrix product before the loop. The node states live in a
write-once tape (``tape.WriteOnceTape``): row 0 is a zero row, row 1 + r holds [h; c] of the
r-th real word of the batch (mask order), so what autograd keeps stays O(words x hidden size).
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
from torch import nn

from spinn_core.batch import checked_mask
from spinn_core.tape import WriteOnceTape

ROOT = -1  # the head of a sentence's root word


@dataclass
class DependencyOutput:
    """What a dependency-tree encoder pass computes; ``B`` sentences of up to ``N`` words."""

    # Shape: (B, D). h of each sentence's root word; zeros for an empty sentence.
    sentence: torch.Tensor
    # Shape: (B, N). The heads followed (ROOT = -1 at the root and at padding).
    heads: torch.Tensor
    # Shapes: (B, N, D) h and (B, N, 2D) [h; c] of every word's node (the word and its
    # dependents' subtrees), zeros at padding; when asked for.
    node_hidden: Optional[torch.Tensor] = None
    node_states: Optional[torch.Tensor] = None


def chain_heads(lengths: torch.Tensor, max_tokens: int) -> torch.Tensor:
    """Shape (B, N): each word headed by the next one, the last word the root: the chain over
    which the Child-Sum Tree-LSTM is a left-to-right LSTM (Tai §3.2, last paragraph). The
    default tree when none is given. Padding gets ROOT."""
    positions = torch.arange(max_tokens, device=lengths.device).unsqueeze(0)
    heads = positions + 1
    heads = torch.where(heads < lengths.unsqueeze(1), heads, ROOT)
    return heads.expand(lengths.size(0), max_tokens).clone()


def check_heads(heads: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Checks that each row of ``heads`` (B, N) is one tree over its sentence's words (every head
    a word of the sentence or ROOT, exactly one root, no cycle) and returns the height of every
    word's node (0 for leaves and padding). Raises ValueError naming the first bad sentence.
    Vectorised over the batch: one pass of a few tensor ops per tree level."""
    mask = mask.bool()
    batch_size, max_tokens = mask.shape
    if heads.shape != mask.shape:
        raise ValueError(
            f"heads must have the mask's shape {tuple(mask.shape)}, got {tuple(heads.shape)}"
        )
    heads = heads.long()
    lengths = mask.sum(dim=1, keepdim=True)
    is_root = (heads == ROOT) & mask
    problems = {
        "head outside the sentence": mask & (heads != ROOT) & ((heads < 0) | (heads >= lengths)),
        "head of a word is itself": mask & (heads == torch.arange(max_tokens, device=heads.device)),
        "not exactly one root": ((is_root.sum(dim=1, keepdim=True) != 1) & (lengths > 0)).expand(
            -1, max_tokens
        ),
    }
    _raise_first(problems, heads, lengths)

    # Heights: each pass raises every head to 1 + its highest dependent. A tree settles within
    # (height + 1) passes; a cycle never settles (heights grow past N).
    flat_heads = heads + torch.arange(batch_size, device=heads.device).unsqueeze(1) * max_tokens
    dependent = (mask & (heads != ROOT)).flatten()
    children = dependent.nonzero().squeeze(1)
    parents = flat_heads.flatten().index_select(0, children)
    height = torch.zeros(batch_size * max_tokens, dtype=torch.long, device=heads.device)
    for _ in range(max_tokens + 1):
        raised = height.scatter_reduce(
            0, parents, height.index_select(0, children) + 1, reduce="amax"
        )
        if torch.equal(raised, height):
            return height.view(batch_size, max_tokens)
        height = raised
    cyclic = (height.view(batch_size, max_tokens) >= max_tokens) & mask
    _raise_first({"cycle": cyclic}, heads, lengths)
    raise AssertionError("heights did not settle without a cycle")  # pragma: no cover


def _raise_first(problems, heads: torch.Tensor, lengths: torch.Tensor) -> None:
    bad = torch.stack([p.any(dim=1) for p in problems.values()], dim=1)
    if bool(bad.any()):
        row, which = (int(x) for x in bad.nonzero()[0])
        length = int(lengths[row])
        raise ValueError(
            f"invalid heads for sentence {row} of the batch ({length} words): "
            f"{list(problems)[which]}: {heads[row, :length].tolist()}"
        )


@dataclass
class DependencyPlan:
    # Shape (B, N): the tape row of every word's node (0 at padding).
    node_rows: torch.Tensor
    # Per height 0, 1, ...: (the level's token indices (rows - 1), its children's token
    # indices, each child's position among the level's nodes).
    levels: List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    # Shape (B,): the tape row of each sentence's root (0 for an empty sentence).
    root_rows: torch.Tensor


def plan_dependency_levels(heads: torch.Tensor, mask: torch.Tensor) -> DependencyPlan:
    """Which words to compute at each height, with their children; checks ``heads`` first."""
    mask = mask.bool()
    batch_size, max_tokens = mask.shape
    device = heads.device
    height = check_heads(heads, mask)[mask]  # (num_tokens,), mask order
    heads = heads.long()
    num_tokens = int(height.numel())
    # Token index (mask order) of every (sentence, position), -1 at padding.
    token_of = torch.full((batch_size, max_tokens), -1, dtype=torch.long, device=device)
    token_of[mask] = torch.arange(num_tokens, device=device)
    node_rows = torch.where(mask, token_of + 1, 0)

    sentence = torch.arange(batch_size, device=device).unsqueeze(1).expand_as(mask)[mask]
    token_heads = heads[mask]
    has_head = token_heads != ROOT
    parent = torch.where(
        has_head, token_of[sentence, token_heads.clamp(min=0)], -1
    )  # (num_tokens,) token index of the head, -1 for roots

    # Nodes sorted by height; a node's position within its level, for its children.
    by_height = height.argsort(stable=True)
    sizes = torch.bincount(height, minlength=1).tolist()
    position = torch.empty_like(height)
    starts = torch.tensor([0] + sizes[:-1], device=device).cumsum(0)
    position[by_height] = torch.arange(num_tokens, device=device) - starts.repeat_interleave(
        torch.tensor(sizes, device=device)
    )
    # Children grouped by their parent's height.
    children = has_head.nonzero().squeeze(1)
    child_parent = parent.index_select(0, children)
    parent_height = height.index_select(0, child_parent)
    children = children[parent_height.argsort(stable=True)]
    child_parent = parent.index_select(0, children)
    child_sizes = torch.bincount(height.index_select(0, child_parent), minlength=len(sizes))
    levels = list(
        zip(
            by_height.split(sizes),
            children.split(child_sizes.tolist()),
            position.index_select(0, child_parent).split(child_sizes.tolist()),
        )
    )
    is_root = mask & (heads == ROOT)
    root_rows = (node_rows * is_root).sum(dim=1)
    return DependencyPlan(node_rows, levels, root_rows)


class ChildSumTreeLSTM(nn.Module):
    """The Child-Sum Tree-LSTM unit (eq. 2-8), over a batch of dependency trees.

    ``input_linear`` holds W and b of the four gates (i, o, u, f), ``child_iou`` the U of
    i, o, u (applied to the sum of the children's h) and ``child_forget`` U_f (applied to each
    child's h). Nodes are [h; c] rows of width 2D.
    """

    def __init__(self, input_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.node_dim = 2 * hidden_dim
        self.input_linear = nn.Linear(input_dim, 4 * hidden_dim)
        self.child_iou = nn.Linear(hidden_dim, 3 * hidden_dim, bias=False)
        self.child_forget = nn.Linear(hidden_dim, hidden_dim, bias=False)

    def forward(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        heads: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
    ) -> DependencyOutput:
        """inputs: (B, N, input_dim) word vectors; mask: (B, N), True on real words, which come
        first; heads: (B, N) each word's head position or ROOT (the chain when None)."""
        device = inputs.device
        batch_size, max_tokens = mask.shape
        mask, lengths = checked_mask(mask)
        if heads is None:
            heads = chain_heads(lengths, max_tokens)
        heads = torch.where(mask, heads.to(device).long(), ROOT)
        D = self.hidden_dim
        plan = plan_dependency_levels(heads, mask)
        # Shape: (num_tokens, 4D): W x + b of every word, in mask order.
        projected = self.input_linear(inputs[mask])
        iou_x, forget_x = projected.split([3 * D, D], dim=-1)
        tape = WriteOnceTape(
            1 + projected.size(0),
            self.node_dim,
            like=inputs,
            zero_rows=torch.zeros(1, dtype=torch.long, device=device),
        )
        for nodes, children, slot in plan.levels:
            iou = iou_x.index_select(0, nodes)
            if children.numel():
                # Shape: (num_children, D) each.
                h_k, c_k = tape.read(children + 1).chunk(2, dim=-1)
                # Shape: (num_nodes, D): the sum of each node's children's h (eq. 2).
                h_sum = h_k.new_zeros(nodes.numel(), D).index_add(0, slot, h_k)
                iou = iou + self.child_iou(h_sum)
                parent_forget_x = forget_x.index_select(0, nodes.index_select(0, slot))
                f_k = torch.sigmoid(parent_forget_x + self.child_forget(h_k))  # eq. 4
                kept = h_k.new_zeros(nodes.numel(), D).index_add(0, slot, f_k * c_k)
            else:
                kept = None
            i, o, u = iou.split(D, dim=-1)
            c = torch.sigmoid(i) * torch.tanh(u)
            if kept is not None:
                c = c + kept  # eq. 7
            h = torch.sigmoid(o) * torch.tanh(c)
            tape.write(nodes + 1, torch.cat([h, c], dim=-1))

        output = DependencyOutput(
            sentence=tape.read(plan.root_rows)[:, :D], heads=heads.masked_fill(~mask, ROOT)
        )
        if return_nodes:
            output.node_states = tape.read(plan.node_rows.flatten()).view(
                batch_size, max_tokens, self.node_dim
            )
            output.node_hidden = output.node_states[..., :D]
        return output
