"""SPINN: a batched thin-stack shift-reduce TreeLSTM (Bowman et al. 2016, Algorithm 1).

Memory layout, per sentence ``b`` of a batch padded to N words and T = 2N - 1 steps, in one
write-once tape (see ``tape.py``) of ``R = 1 + N + T`` rows of node states:

* row 0 is a zero node, read wherever there is nothing to read (empty stack or buffer);
* rows 1..N are the buffer: the projected words, written once before the first step;
* row N + 1 + t is ``S[t]``, written by a REDUCE at step t.

A SHIFT pushes a pointer to the buffer row instead of copying it into ``S[t]`` (the same stack,
one copy fewer). The backpointer queue Q of Algorithm 1 is a ``(B, N + 1)`` tensor of row
pointers with a depth per sentence, updated with tensor ops: there is no Python loop over
sentences, only over the T steps. What autograd keeps is O(B * T * D).
"""

from typing import List, Optional

import torch
from torch import nn

from spinn_allennlp.core.batching import (
    check_given_transitions,
    checked_mask,
    default_transitions,
    fit_width,
)
from spinn_allennlp.core.cells import COMPOSITIONS, BufferProjection, Tracker
from spinn_allennlp.core.levelwise import levelwise_forward
from spinn_allennlp.core.output import GIVEN, MIXED, MODES, SpinnOutput
from spinn_allennlp.core.tape import WriteOnceTape
from spinn_allennlp.core.transitions import PAD, REDUCE, SHIFT


class Spinn(nn.Module):
    """The SPINN encoder core, with the paper's variants as options.

    * ``tracking_dim=0``: SPINN-PI-NT, exactly a TreeLSTM over the given tree (§3.6); composed
      level by level unless ``levelwise=False``.
    * ``tracking_dim>0``: SPINN-PI, the tracking LSTM feeds the composition (§3.3).
    * ``predict_transitions=True`` (needs tracking): full SPINN, with a transition classifier
      (eq. 5) that can drive the parse itself.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        tracking_dim: int = 0,
        predict_transitions: bool = False,
        composition: str = "treelstm",
        projection_dropout: float = 0.0,
        projection_batch_norm: bool = False,
        levelwise: bool = True,
    ) -> None:
        super().__init__()
        if predict_transitions and tracking_dim <= 0:
            raise ValueError("predicting transitions needs a tracking LSTM (tracking_dim > 0)")
        if composition not in COMPOSITIONS:
            raise ValueError(
                f"composition must be one of {sorted(COMPOSITIONS)}, got {composition!r}"
            )
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.predict_transitions = predict_transitions
        self.compose = COMPOSITIONS[composition](hidden_dim, extra_dim=max(tracking_dim, 0))
        self.node_dim = self.compose.node_dim
        self.projection = BufferProjection(
            input_dim, self.node_dim, projection_dropout, projection_batch_norm
        )
        self.tracker = (
            Tracker(hidden_dim, tracking_dim, predict_transitions) if tracking_dim > 0 else None
        )
        # Given transitions and no tracking: compose level by level (core/levelwise.py), the
        # loop running tree-height times instead of 2N - 1. Same function, same parameters.
        self.levelwise = levelwise
        # Compose only the reducing sentences at each step (True), the whole batch (False), or
        # choose by device (None: sparse on CPU, whole batch on GPUs, where a sync costs more).
        self.sparse_compose: Optional[bool] = None

    def forward(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor] = None,
        mode: str = GIVEN,
        self_transition_prob: float = 0.0,
        return_nodes: bool = False,
    ) -> SpinnOutput:
        """Encodes a batch.

        inputs: (B, N, input_dim) word vectors; mask: (B, N), True on real words, which come
        first in each row. transitions: (B, T') with SHIFT/REDUCE/PAD, followed in "given" mode
        (the balanced binary tree when None), mixed with predictions in "mixed" mode and unused
        in "predicted" mode.
        ``self_transition_prob`` is the chance, per step, that "mixed" mode follows the model's
        own prediction instead of the given transition (NSHRDLU Model 2).
        """
        if mode not in MODES:
            raise ValueError(f"unknown transition mode {mode!r}")
        if mode != GIVEN and not self.predict_transitions:
            raise ValueError(f"mode {mode!r} needs a parser (predict_transitions=True)")
        if mode == MIXED and transitions is None:
            raise ValueError("mode 'mixed' needs given transitions to mix with")
        if mode == GIVEN and self.tracker is None and self.levelwise:
            return levelwise_forward(
                self.projection, self.compose, inputs, mask, transitions, return_nodes
            )
        batch_size, max_tokens = mask.shape
        mask, lengths = checked_mask(mask)
        if mode == GIVEN:
            if transitions is None:
                transitions = default_transitions(lengths)
            num_steps = check_given_transitions(transitions, lengths)
        else:
            num_steps = (2 * lengths - 1).clamp(min=0)
        total_steps = int(num_steps.max()) if batch_size else 0
        if transitions is not None:
            transitions = fit_width(transitions.long(), total_steps)

        device = inputs.device
        rows_per_sentence = 1 + max_tokens + total_steps
        base = torch.arange(batch_size, device=device) * rows_per_sentence  # row 0 of each sentence
        if batch_size == 0:
            return SpinnOutput(
                inputs.new_zeros(0, self.hidden_dim),
                mode=mode,
                transitions=torch.zeros(0, 0, dtype=torch.long, device=device),
            )
        tape = WriteOnceTape(
            batch_size * rows_per_sentence, self.node_dim, like=inputs, zero_rows=base
        )
        sparse_compose = (
            self.sparse_compose if self.sparse_compose is not None else device.type == "cpu"
        )

        buffer_rows = base.unsqueeze(1) + 1 + torch.arange(max_tokens, device=device)
        tape.write(buffer_rows[mask], self.projection(inputs, mask))  # padding rows: never read

        hidden = self.compose.hidden
        queue = base.unsqueeze(1).repeat(1, max_tokens + 1)  # Q: row pointers, bottom first
        depth = torch.zeros_like(lengths)
        buffer_position = torch.zeros_like(lengths)  # words shifted so far
        tracker_state = (
            self.tracker.initial_state(batch_size, inputs) if self.tracker is not None else None
        )
        followed: List[torch.Tensor] = []
        pushed: List[torch.Tensor] = []
        all_logits: List[torch.Tensor] = []
        batch_index = torch.arange(batch_size, device=device)

        for t in range(total_steps):
            # The two rows a REDUCE would compose and the row a SHIFT would push.
            stack_top = _peek(queue, depth - 1, base)
            stack_second = _peek(queue, depth - 2, base)
            has_word = buffer_position < lengths
            buffer_top = torch.where(has_word, base + 1 + buffer_position, base)
            if self.tracker is not None:
                read = tape.read(torch.cat([buffer_top, stack_top, stack_second]))
                buffer_node, right, left = read.split(batch_size)
                tracker_state, logits = self.tracker(
                    hidden(buffer_node), hidden(right), hidden(left), tracker_state
                )
                if logits is not None:
                    all_logits.append(logits)
                extra = tracker_state[0]
            else:
                left = right = extra = logits = None  # read below, only where needed

            # Which transition each sentence takes at step t.
            active = t < num_steps
            if mode == GIVEN:
                assert transitions is not None
                action = transitions[:, t]
            else:
                assert logits is not None
                predicted = logits.argmax(dim=-1)
                if mode == MIXED:
                    assert transitions is not None
                    follow_own = torch.rand(batch_size, device=device) < self_transition_prob
                    predicted = torch.where(follow_own, predicted, transitions[:, t])
                # Only legal moves, so every prediction is a binary tree over all the words.
                action = torch.where(depth < 2, SHIFT, torch.where(~has_word, REDUCE, predicted))
            action = torch.where(active, action, PAD)
            is_shift = action == SHIFT
            is_reduce = action == REDUCE

            # REDUCE: S[t] := COMPOSE(left, right).
            new_row = base + 1 + max_tokens + t
            if sparse_compose:
                # Only the sentences that reduce now (a third of all rows on average): fewer
                # FLOPs, at the price of a host sync for nonzero(), so CPU only by default.
                rows = is_reduce.nonzero().squeeze(1)
                if rows.numel():
                    if left is None:
                        pointers = torch.cat([stack_second[rows], stack_top[rows]])
                        left, right = tape.read(pointers).chunk(2)
                    else:
                        left, right = left[rows], right[rows]
                    tape.write(
                        new_row[rows],
                        self.compose(left, right, None if extra is None else extra[rows]),
                    )
            else:
                # The whole batch at once; rows of sentences that don't reduce at t are written
                # but never pointed to.
                if left is None:
                    left, right = tape.read(torch.cat([stack_second, stack_top])).split(batch_size)
                tape.write(new_row, self.compose(left, right, extra))

            # Push: a SHIFT puts the buffer top at depth, a REDUCE replaces the top two by S[t].
            push_row = torch.where(is_shift, buffer_top, torch.where(is_reduce, new_row, base))
            slot = torch.where(is_shift, depth, torch.where(is_reduce, depth - 2, depth - 1)).clamp(
                min=0
            )
            keep = queue[batch_index, slot]
            queue[batch_index, slot] = torch.where(is_shift | is_reduce, push_row, keep)
            depth = depth + is_shift.long() - is_reduce.long()
            buffer_position = buffer_position + is_shift.long()
            followed.append(action)
            pushed.append(push_row)

        top = _peek(queue, depth - 1, base)
        sentence = hidden(tape.read(top))
        output = SpinnOutput(
            sentence=sentence,
            transitions=(
                torch.stack(followed, dim=1)
                if followed
                else torch.zeros(batch_size, 0, dtype=torch.long, device=device)
            ),
            transition_logits=torch.stack(all_logits, dim=1) if all_logits else None,
            mode=mode,
        )
        if return_nodes:
            if pushed:
                nodes = tape.read(torch.stack(pushed, dim=1).flatten())
            else:
                nodes = inputs.new_zeros(0, self.node_dim)
            output.node_states = nodes.view(batch_size, total_steps, self.node_dim)
            output.node_hidden = hidden(output.node_states)
        return output


def _peek(queue: torch.Tensor, position: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """Row pointer at ``position`` in each sentence's queue, or its zero row if position < 0."""
    pointer = queue.gather(1, position.clamp(min=0).unsqueeze(1)).squeeze(1)
    return torch.where(position >= 0, pointer, base)
