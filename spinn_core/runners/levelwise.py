"""Level-wise batching of SPINN-PI-NT (given transitions, no tracking: a plain TreeLSTM).

Without a tracking LSTM a node depends on nothing but its two children (and its own input, for
node inputs), so every node of the same height, across the whole batch, can be composed in one
call, as in DGL's Tree-LSTM: the loop runs (max tree height) times instead of T = 2N - 1 (a
balanced 64-word tree: 6 calls instead of 127). The result is the thin stack's with the
:class:`Given` policy, up to float rounding, with the same layers.

Memory: the prepared batch's write-once tape (``batch.py``), whose rows are the thin stack's,
so what autograd keeps stays O(rows x node_dim) however many levels there are.
"""

from dataclasses import dataclass
from typing import List, Tuple

import torch

from spinn_core.batch import PreparedBatch
from spinn_core.output import SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import TransitionPolicy
from spinn_core.rules import check_levelwise
from spinn_core.transitions import REDUCE, SHIFT


@dataclass
class LevelPlan:
    # (B, T): the tape row of the node pushed at each step (the sentence's zero row at PAD).
    node_rows: torch.Tensor
    # One (rows, left child rows, right child rows) triple per height 1, 2, ...
    levels: List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    # Per height, the step of each of that level's REDUCEs, as flat indices b * T + t (for
    # per-node inputs).
    level_steps: List[torch.Tensor]


def plan_levels(
    transitions: torch.Tensor, word_rows: torch.Tensor, step_rows: torch.Tensor, base: torch.Tensor
) -> LevelPlan:
    """Tape rows of every step's node and, per height, the REDUCE rows and their children.

    ``transitions``: (B, T) valid given transitions (see ``check_given_transitions``; left-padded
    forests included), PAD after each row's end; ``word_rows`` (B, N), ``step_rows`` (B, T) and
    ``base`` (B,): the tape rows of the words, of each step's node and the zero rows (see
    ``PreparedBatch``). Vectorised over the batch: a few (B, T) tensor ops, plus one pass of a
    few such ops per level to find the heights. No autograd.
    """
    batch_size, num_steps = transitions.shape
    device = transitions.device
    is_shift, is_reduce = transitions == SHIFT, transitions == REDUCE

    # The node each step pushes: the k-th SHIFT pushes word k; a REDUCE writes its step's row.
    word = (is_shift.long().cumsum(dim=1) - 1).clamp(min=0)  # < N: at most N SHIFTs
    leaf_row = word_rows.gather(1, word)
    node_rows = torch.where(
        is_shift, leaf_row, torch.where(is_reduce, step_rows, base.unsqueeze(1))
    )

    # Children of each REDUCE, as flat step indices b*T + t. In post-order the right child is
    # the previous step's node. The left child is the latest earlier node that left the stack
    # as deep as the REDUCE leaves it (the slot the result overwrites), so sorting each row's
    # steps by (depth after the step, step) puts the left child just before its parent.
    flat = torch.arange(batch_size * num_steps, device=device).view(batch_size, num_steps)
    depth = (is_shift.long() - is_reduce.long()).cumsum(dim=1)
    order = (depth * num_steps + torch.arange(num_steps, device=device)).argsort(dim=1)
    predecessor = flat.gather(1, order).roll(1, dims=1)
    left_of = torch.empty_like(flat).scatter_(1, order, predecessor).flatten()
    reduces = is_reduce.flatten().nonzero().squeeze(1)  # in (sentence, step) order
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

    # Group the REDUCEs by height (stable: (sentence, step) order within a level): one sort
    # and one host sync for the level sizes.
    reduce_heights = height.index_select(0, reduces)
    by_height = reduce_heights.argsort(stable=True)
    sizes = torch.bincount(reduce_heights, minlength=1)[1:].tolist()
    flat_rows = node_rows.flatten()
    level_reduces = reduces.index_select(0, by_height)
    rows = flat_rows.index_select(0, level_reduces)
    lefts = flat_rows.index_select(0, left.index_select(0, by_height))
    rights = flat_rows.index_select(0, right.index_select(0, by_height))
    levels = list(zip(rows.split(sizes), lefts.split(sizes), rights.split(sizes)))
    return LevelPlan(node_rows, levels, list(level_reduces.split(sizes)))


def run_levelwise(batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy) -> SpinnOutput:
    """Encodes ``batch`` over its given transitions one tree level at a time. Needs a policy
    that follows the given transitions and parts without a tracker."""
    check_levelwise(policy.follows_given, has_tracker=parts.tracker is not None)
    assert batch.transitions is not None  # follows_given: the batch has them
    tape = batch.tape
    plan = plan_levels(batch.transitions, batch.word_rows(), batch.step_rows(), batch.base)
    level_inputs: List = [None] * len(plan.levels)
    if batch.node_inputs is not None:
        # One gather of every REDUCE's input, in level order, then split per level.
        width = batch.node_inputs.size(-1)
        flat_inputs = batch.node_inputs[:, : batch.total_steps].reshape(-1, width)
        steps = torch.cat(plan.level_steps) if plan.level_steps else plan.node_rows.new_zeros(0)
        sizes = [step.numel() for step in plan.level_steps]
        level_inputs = list(flat_inputs.index_select(0, steps).split(sizes))
    for (rows, left, right), node_input in zip(plan.levels, level_inputs):
        # One read of both children and one composition for every node of this height.
        left_nodes, right_nodes = tape.read(torch.cat([left, right])).split(rows.numel())
        tape.write(
            rows, parts.compose(left_nodes, right_nodes, parts.extra_input(None, node_input))
        )

    # The stack top after the last step is the node that step pushed.
    num_steps = batch.num_steps
    last = plan.node_rows.gather(1, (num_steps - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
    top = torch.where(num_steps > 0, last, batch.base)
    hidden = parts.compose.hidden
    output = SpinnOutput(
        sentence=hidden(tape.read(top)), transitions=batch.transitions.clone(), mode=policy.mode
    )
    if batch.return_nodes:
        nodes = tape.read(plan.node_rows.flatten())
        output.node_states = nodes.view(batch.batch_size, batch.total_steps, parts.node_dim)
        output.node_hidden = hidden(output.node_states)
    return output
