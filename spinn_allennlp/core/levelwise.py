"""Level-wise batching of SPINN-PI-NT (given transitions, no tracking: a plain TreeLSTM).

Without a tracking LSTM a node depends on nothing but its two children, so every node of the
same height, across the whole batch, can be composed in one call, as in DGL's Tree-LSTM: the
loop runs (max tree height) times instead of T = 2N - 1 (a balanced 64-word tree: 6 calls
instead of 127). The result is :meth:`Spinn.forward`'s with ``mode="given"``, up to float
rounding, with the same layers (the model's ``projection`` and ``compose``).

Memory layout: one write-once tape (see ``tape.py``) for the whole batch of B sentences of up
to N words, so what autograd keeps stays O(rows x node_dim), however many levels there are:

* row 0 is a zero node (PAD steps, empty sentences);
* rows 1..B*N are the projected words, word i of sentence b at row 1 + b*N + i (rows of
  padding positions are never written nor read);
* then one row per REDUCE of the batch, in (sentence, step) order.
"""

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import torch

from spinn_allennlp.core.batching import (
    check_given_transitions,
    check_word_vectors,
    checked_mask,
    default_transitions,
    fit_width,
)
from spinn_allennlp.core.cells import Composition
from spinn_allennlp.core.output import GIVEN, SpinnOutput
from spinn_allennlp.core.tape import WriteOnceTape
from spinn_allennlp.core.transitions import REDUCE, SHIFT


@dataclass
class LevelPlan:
    # (B, T): the tape row of the node pushed at each step (0 at PAD steps).
    node_rows: torch.Tensor
    # One (rows, left child rows, right child rows) triple per height 1, 2, ...
    levels: List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    num_rows: int
    # Per height, the step of each of that level's REDUCEs, as flat indices b * T + t (for
    # per-node inputs).
    level_steps: List[torch.Tensor]


def plan_levels(transitions: torch.Tensor, max_tokens: int) -> LevelPlan:
    """Tape rows of every step's node and, per height, the REDUCE rows and their children.

    ``transitions``: (B, T) valid given transitions (see ``check_given_transitions``; left-padded
    forests included), PAD after each row's end. Vectorised over the batch: a few (B, T) tensor
    ops, plus one pass of a few such ops per level to find the heights. No autograd.
    """
    batch_size, num_steps = transitions.shape
    device = transitions.device
    is_shift, is_reduce = transitions == SHIFT, transitions == REDUCE

    # The node each step pushes: the k-th SHIFT pushes word k; each REDUCE gets a fresh row.
    word = is_shift.long().cumsum(dim=1) - 1
    leaf_row = 1 + torch.arange(batch_size, device=device).unsqueeze(1) * max_tokens + word
    first_reduce_row = 1 + batch_size * max_tokens
    reduce_row = first_reduce_row + is_reduce.flatten().long().cumsum(dim=0).view_as(word) - 1
    node_rows = torch.where(is_shift, leaf_row, torch.where(is_reduce, reduce_row, 0))

    # Children of each REDUCE, as flat step indices b*T + t. In post-order the right child is
    # the previous step's node. The left child is the latest earlier node that left the stack
    # as deep as the REDUCE leaves it (the slot the result overwrites), so sorting each row's
    # steps by (depth after the step, step) puts the left child just before its parent.
    flat = torch.arange(batch_size * num_steps, device=device).view(batch_size, num_steps)
    depth = (is_shift.long() - is_reduce.long()).cumsum(dim=1)
    order = (depth * num_steps + torch.arange(num_steps, device=device)).argsort(dim=1)
    predecessor = flat.gather(1, order).roll(1, dims=1)
    left_of = torch.empty_like(flat).scatter_(1, order, predecessor).flatten()
    reduces = is_reduce.flatten().nonzero().squeeze(1)  # in (sentence, step) = tape row order
    left, right = left_of.index_select(0, reduces), reduces - 1

    # Heights: leaves 0, a node 1 + max(children). Each pass settles the next level; -1 marks
    # a height not known yet (and PAD steps, which are never read).
    height = torch.where(is_shift.flatten(), 0, -1)
    while True:
        h_left, h_right = height.index_select(0, left), height.index_select(0, right)
        known = torch.minimum(h_left, h_right) >= 0
        settled = height.index_copy(
            0, reduces, torch.where(known, 1 + torch.maximum(h_left, h_right), -1)
        )
        if torch.equal(settled, height):
            break
        height = settled

    # Group the REDUCEs by height: one sort and one host sync for the level sizes.
    reduce_heights = height.index_select(0, reduces)
    by_height = reduce_heights.argsort(stable=True)
    sizes = torch.bincount(reduce_heights, minlength=1)[1:].tolist()
    flat_rows = node_rows.flatten()
    rows = first_reduce_row + by_height
    lefts = flat_rows.index_select(0, left.index_select(0, by_height))
    rights = flat_rows.index_select(0, right.index_select(0, by_height))
    levels = list(zip(rows.split(sizes), lefts.split(sizes), rights.split(sizes)))
    level_steps = list(reduces.index_select(0, by_height).split(sizes))
    return LevelPlan(node_rows, levels, first_reduce_row + int(reduces.numel()), level_steps)


def levelwise_forward(
    projection: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    compose: Composition,
    inputs: torch.Tensor,
    mask: torch.Tensor,
    transitions: Optional[torch.Tensor] = None,
    return_nodes: bool = False,
    node_inputs: Optional[torch.Tensor] = None,
) -> SpinnOutput:
    """SPINN-PI-NT over given transitions (the balanced tree when None), composed level by
    level: ``Spinn.forward(inputs, mask, transitions, mode="given", return_nodes=...,
    node_inputs=...)`` of a model without tracking whose layers are ``projection`` (the
    leaves: ``(inputs, mask)`` to the real words' node rows, e.g. ``Spinn.leaves``) and
    ``compose``.

    inputs: (B, N, input_dim) word vectors; mask: (B, N), True on real words, which come first;
    node_inputs: (B, T'', d) with T'' at least the number of steps, the input of the node made
    at each step (read at REDUCEs), when the composition takes one (``extra_dim == d``).
    """
    node_input_dim = 0 if node_inputs is None else node_inputs.size(-1)
    if compose.extra_dim != node_input_dim:
        raise ValueError(
            "level-wise batching needs a composition without an extra input but the node "
            f"input (extra_dim {compose.extra_dim}, node inputs of width {node_input_dim}): a "
            "tracking LSTM makes every node depend on all earlier steps"
        )
    device = inputs.device
    check_word_vectors(inputs, mask)
    batch_size, max_tokens = mask.shape
    mask, lengths = checked_mask(mask)
    if transitions is None:
        transitions = default_transitions(lengths)
    num_steps = check_given_transitions(transitions, lengths).to(device)
    total_steps = int(num_steps.max()) if batch_size else 0
    transitions = fit_width(transitions.long(), total_steps).to(device)
    if batch_size == 0:
        return SpinnOutput(
            inputs.new_zeros(0, compose.hidden_dim),
            transitions=torch.zeros(0, 0, dtype=torch.long, device=device),
        )

    plan = plan_levels(transitions, max_tokens)
    # Rows are read only once written, but for row 0; padding words are never written.
    tape = WriteOnceTape(
        plan.num_rows,
        compose.node_dim,
        like=inputs,
        zero_rows=torch.zeros(1, dtype=torch.long, device=device),
    )
    # The same projection call as Spinn.forward, so batch norm and dropout see (and draw)
    # exactly the same.
    word_rows = 1 + torch.arange(batch_size * max_tokens, device=device).view(
        batch_size, max_tokens
    )
    tape.write(word_rows[mask], projection(inputs, mask))
    level_inputs: List[Optional[torch.Tensor]] = [None] * len(plan.levels)
    if node_inputs is not None:
        if node_inputs.dim() != 3 or node_inputs.size(1) < total_steps:
            raise ValueError(
                f"node_inputs must have shape (batch, at least {total_steps} steps, dim), "
                f"got {tuple(node_inputs.shape)}"
            )
        # One gather of every REDUCE's input, in level order, then split per level.
        flat_inputs = node_inputs[:, :total_steps].reshape(-1, node_input_dim)
        steps = torch.cat(plan.level_steps) if plan.level_steps else plan.node_rows.new_zeros(0)
        sizes = [step.numel() for step in plan.level_steps]
        level_inputs = list(flat_inputs.index_select(0, steps).split(sizes))
    for (rows, left, right), extra in zip(plan.levels, level_inputs):
        # One read of both children and one composition for every node of this height.
        left_nodes, right_nodes = tape.read(torch.cat([left, right])).split(rows.numel())
        tape.write(rows, compose(left_nodes, right_nodes, extra))

    # The stack top after the last step is the node that step pushed (0 if there was none).
    if total_steps:
        last = plan.node_rows.gather(1, (num_steps - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
        top = torch.where(num_steps > 0, last, 0)
    else:
        top = torch.zeros(batch_size, dtype=torch.long, device=device)
    hidden = compose.hidden
    output = SpinnOutput(
        sentence=hidden(tape.read(top)), transitions=transitions.clone(), mode=GIVEN
    )
    if return_nodes:
        nodes = tape.read(plan.node_rows.flatten())
        output.node_states = nodes.view(batch_size, total_steps, compose.node_dim)
        output.node_hidden = hidden(output.node_states)
    return output
