"""SPINN: a batched thin-stack shift-reduce TreeLSTM (Bowman et al. 2016, Algorithm 1).

Memory layout, per sentence of a batch padded to N words and T = 2N - 1 steps, in one
write-once tape (see ``tape.py``) of ``R = 1 + N + T`` rows of node states:

* row 0 is a zero node, read wherever there is nothing to read (empty stack or buffer);
* rows 1..N are the buffer: the projected words, written once before the first step;
* row N + 1 + t is ``S[t]``, written by a REDUCE at step t.

A SHIFT pushes a pointer to the buffer row instead of copying it into ``S[t]`` (the same stack,
one copy fewer). The backpointer queue Q of Algorithm 1 is a tensor of row pointers per
sentence, with a cursor per sentence (buffer position and depth) updated with tensor ops: there
is no Python loop over sentences, only over the T steps. What autograd keeps is O(B * T * D).

The cost of a step is a few small batched ops plus the matrix products, so the loop keeps the
ops few: sentences are processed longest first, so that those still running at step t are a
prefix of the batch and every op works on a slice; the tracker's three inputs are one read;
only the sentences that REDUCE are composed (their indices known before the loop when the
transitions are given, so that GPUs need no host synchronisation inside the loop).
"""

from typing import Callable, List, Optional

import torch
from torch import nn

from spinn_allennlp.core.batching import (
    check_given_transitions,
    check_transition_values,
    check_transitions_tensor,
    check_word_vectors,
    checked_mask,
    default_transitions,
    fit_width,
)
from spinn_allennlp.core.cells import COMPOSITIONS, BufferProjection, Summaries, Tracker
from spinn_allennlp.core.levelwise import levelwise_forward
from spinn_allennlp.core.output import GIVEN, MIXED, MODES, PREDICTED, SOFT, SpinnOutput
from spinn_allennlp.core.soft_stack import soft_forward
from spinn_allennlp.core.tape import WriteOnceTape
from spinn_allennlp.core.transitions import PAD, REDUCE, SHIFT


class Spinn(nn.Module):
    """The SPINN encoder core, with the paper's variants as options.

    * ``tracking_dim=0``: SPINN-PI-NT, exactly a TreeLSTM over the given tree (§3.6); composed
      level by level unless ``levelwise=False``.
    * ``tracking_dim>0``: SPINN-PI, the tracking LSTM feeds the composition (§3.3).
    * ``predict_transitions=True`` (needs tracking): full SPINN, with a transition classifier
      (eq. 5) that can drive the parse itself.
    * ``reduce_types=K`` (needs tracking): typed REDUCE (NSHRDLU §3.3): each REDUCE has one of K
      types, whose learned embedding (``type_dim``) joins the composition's extra input, so the
      composition depends on the type (through its gates: a type-specific, low-rank shift of
      every gate's pre-activation). With a parser, a type classifier on the tracker's state
      predicts the type of each REDUCE; given types are followed where given transitions are.
    * ``summary_dim>0`` (needs tracking): the tracker also reads LSTM summaries of the whole
      stack and of the whole buffer (NSHRDLU §3.1; ``cells.Summaries``), not only their tops.

    Node inputs (Chen et al. 2017, eq. 3-10): with ``node_input_dim > 0`` every REDUCE also
    takes an input vector of its own, ``node_inputs[:, t]`` for the node made at step t, next
    to the tracker's state in the composition's extra input. ``leaf="cell"`` makes the leaves
    the same cell with no children, taking the word vector as their input (so
    ``node_input_dim == input_dim``), instead of the linear projection of eq. 4.
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
        node_input_dim: int = 0,
        leaf: str = "projection",
        reduce_types: int = 0,
        type_dim: int = 16,
        summary_dim: int = 0,
    ) -> None:
        super().__init__()
        if predict_transitions and tracking_dim <= 0:
            raise ValueError("predicting transitions needs a tracking LSTM (tracking_dim > 0)")
        if reduce_types and tracking_dim <= 0:
            raise ValueError("typed REDUCE needs a tracking LSTM (tracking_dim > 0)")
        if summary_dim and tracking_dim <= 0:
            raise ValueError("stack and buffer summaries feed a tracking LSTM (tracking_dim > 0)")
        if composition not in COMPOSITIONS:
            raise ValueError(
                f"composition must be one of {sorted(COMPOSITIONS)}, got {composition!r}"
            )
        _check_leaf(
            leaf, input_dim, node_input_dim, tracking_dim, projection_dropout, projection_batch_norm
        )
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.predict_transitions = predict_transitions
        self.node_input_dim = node_input_dim
        type_dim = type_dim if reduce_types else 0
        # The composition's extra input: [tracker state; node input; REDUCE type], each may be
        # absent.
        self.compose = COMPOSITIONS[composition](
            hidden_dim, extra_dim=max(tracking_dim, 0) + node_input_dim + type_dim
        )
        self.node_dim = self.compose.node_dim
        self.projection = (
            BufferProjection(input_dim, self.node_dim, projection_dropout, projection_batch_norm)
            if leaf == "projection"
            else None
        )
        self.tracker = (
            Tracker(hidden_dim, tracking_dim, predict_transitions, summary_dim)
            if tracking_dim > 0
            else None
        )
        self.summaries = Summaries(hidden_dim, summary_dim) if summary_dim else None
        self.reduce_types = reduce_types
        self.type_embedding = nn.Embedding(reduce_types, type_dim) if reduce_types else None
        self.type_classifier = (
            nn.Linear(tracking_dim, reduce_types) if reduce_types and predict_transitions else None
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
        node_inputs: Optional[torch.Tensor] = None,
        reduce_types: Optional[torch.Tensor] = None,
    ) -> SpinnOutput:
        """Encodes a batch.

        inputs: (B, N, input_dim) word vectors; mask: (B, N), True on real words, which come
        first in each row. transitions: (B, T') with SHIFT/REDUCE/PAD, followed in "given" mode
        (the balanced binary tree when None), mixed with predictions in "mixed" mode and unused
        in "predicted" mode.
        ``self_transition_prob`` is the chance, per step, that "mixed" mode follows the model's
        own prediction instead of the given transition (NSHRDLU Model 2). "soft" mode runs a soft
        stack whose strengths are the parser's probabilities (``soft_stack.py``; NSHRDLU Models
        3-4), or the one-hot strengths of ``transitions`` when given.
        ``node_inputs``: (B, T'', node_input_dim), T'' at least the number of steps taken;
        column t is the input of the node made at step t (read at REDUCEs; a leaf's input is
        its word in ``inputs``). Required exactly when ``node_input_dim > 0``.
        ``reduce_types``: (B, T') the type of each given REDUCE (-1 elsewhere), for a model with
        typed REDUCE; followed with the given transitions, and predicted where the model follows
        its own (or, without a type classifier, required).
        """
        if mode not in MODES:
            raise ValueError(f"unknown transition mode {mode!r}")
        if mode != GIVEN and not self.predict_transitions:
            raise ValueError(f"mode {mode!r} needs a parser (predict_transitions=True)")
        if mode == MIXED and transitions is None:
            raise ValueError("mode 'mixed' needs given transitions to mix with")
        if (node_inputs is None) != (self.node_input_dim == 0):
            raise ValueError(
                f"node_inputs must be given exactly when node_input_dim > 0 "
                f"(node_input_dim = {self.node_input_dim})"
            )
        if mode == SOFT:
            assert self.tracker is not None  # predict_transitions needs one
            if self.node_input_dim:
                raise ValueError("node inputs are not implemented on the soft stack")
            if self.summaries is not None:
                raise ValueError("stack and buffer summaries are not implemented on the soft stack")
            return soft_forward(
                self.leaves,
                self.compose,
                self.tracker,
                inputs,
                mask,
                transitions,
                return_nodes,
                type_embedding=self.type_embedding,
                type_classifier=self.type_classifier,
            )
        if mode == GIVEN and self.tracker is None and self.levelwise:
            return levelwise_forward(
                self.leaves, self.compose, inputs, mask, transitions, return_nodes, node_inputs
            )
        check_word_vectors(inputs, mask)
        batch_size, max_tokens = mask.shape
        mask, lengths = checked_mask(mask)
        if transitions is not None:
            check_transitions_tensor(transitions, batch_size)
        if mode == GIVEN:
            if transitions is None:
                transitions = default_transitions(lengths)
            num_steps = check_given_transitions(transitions, lengths)
        else:
            if mode == MIXED:
                # Given steps are followed where legal, the parser's own past their end (PAD);
                # any other value would act as a SHIFT unnoticed.
                assert transitions is not None
                check_transition_values(transitions)
            num_steps = (2 * lengths - 1).clamp(min=0)
        total_steps = int(num_steps.max()) if batch_size else 0
        if transitions is not None:
            transitions = fit_width(transitions.long(), total_steps).to(inputs.device)
        if (
            self.reduce_types
            and self.type_classifier is None
            and (reduce_types is None or mode != GIVEN)
        ):
            raise ValueError("typed REDUCE without a type classifier needs given reduce_types")

        device = inputs.device
        if batch_size == 0:
            return SpinnOutput(
                inputs.new_zeros(0, self.hidden_dim),
                mode=mode,
                transitions=torch.zeros(0, 0, dtype=torch.long, device=device),
            )
        sparse_compose = (
            self.sparse_compose
            if self.sparse_compose is not None
            else device.type == "cpu" or mode == GIVEN
        )

        # Longest first, as packed sequences: the sentences still running at step t are then
        # the first running[t] rows, and every step works on slices [:k] of its state. Sentence
        # b is row rank[b] of this order. Given transitions say in advance which rows REDUCE at
        # each step; those index lists (and running) cost one host sync here, none in the loop.
        order = num_steps.argsort(descending=True, stable=True)
        rank = torch.empty_like(order).index_copy_(
            0, order, torch.arange(batch_size, device=device)
        )
        step_numbers = torch.arange(total_steps, device=device).unsqueeze(1)
        active = num_steps.index_select(0, order).unsqueeze(0) > step_numbers  # (T, B)
        given_steps: Optional[torch.Tensor] = None  # (T, B), sorted rows
        if transitions is not None:
            given_steps = transitions.index_select(0, order).t().contiguous()
        given_types: Optional[torch.Tensor] = None  # (T, B), sorted rows
        if reduce_types is not None and self.reduce_types and mode != PREDICTED:
            given_types = fit_width(reduce_types.long().to(device), total_steps)
            given_types = given_types.index_select(0, order).t().contiguous()
        reducing: Optional[List[torch.Tensor]] = None
        if mode == GIVEN and sparse_compose:
            assert given_steps is not None
            reduce_steps = given_steps == REDUCE
            counts = torch.stack([active.sum(dim=1), reduce_steps.sum(dim=1)]).tolist()
            running = counts[0]
            reducing = list(reduce_steps.nonzero()[:, 1].split(counts[1]))
        else:
            running = active.sum(dim=1).tolist()

        # The tape: rows base[i] (zero), base[i] + 1 + j (word j), base[i] + 1 + N + t (S[t])
        # for sorted row i.
        rows_per_sentence = 1 + max_tokens + total_steps
        base = torch.arange(batch_size, device=device) * rows_per_sentence
        tape = WriteOnceTape(
            batch_size * rows_per_sentence, self.node_dim, like=inputs, zero_rows=base
        )
        word_rows = base.index_select(0, rank).unsqueeze(1) + 1
        word_rows = word_rows + torch.arange(max_tokens, device=device)
        tape.write(word_rows[mask], self.leaves(inputs, mask))  # padding rows: never read
        # One input per step for the node it makes, rows in sorted order (unbind: one cheap
        # backward for all steps).
        step_inputs = (
            _node_input_columns(node_inputs.index_select(0, order), total_steps)
            if node_inputs is not None
            else None
        )
        step_rows = base + 1 + max_tokens  # + t: the row S[t]

        # Row pointers per sorted sentence: the stack (Q of Algorithm 1) in columns 0..N+1,
        # item d (1 = bottom) at column d + 1 above two columns pointing at the zero row, then
        # the buffer: column N + 2 + j points at word j, or at the zero row past the last word.
        # cursor holds, per sentence, the columns of the buffer top, stack top and stack
        # second: [N + 2 + words shifted, depth + 1, depth]. An empty stack or buffer thus
        # reads the zero row without a test.
        buffer_start = max_tokens + 2
        lengths_sorted = lengths.index_select(0, order)
        positions = torch.arange(max_tokens + 1, device=device)
        pointers = torch.cat(
            [
                base.unsqueeze(1).expand(-1, buffer_start),
                torch.where(
                    positions < lengths_sorted.unsqueeze(1),
                    base.unsqueeze(1) + 1 + positions,
                    base.unsqueeze(1),
                ),
            ],
            dim=1,
        )
        cursor = torch.tensor([buffer_start, 1, 0], device=device).repeat(batch_size, 1)
        buffer_end = buffer_start + lengths_sorted
        # How a SHIFT and a REDUCE move the cursor.
        moves = torch.tensor([[1, 1, 1], [0, -1, -1]], device=device)

        hidden = self.compose.hidden
        summaries = None
        if self.summaries is not None:
            summaries = _SummaryState(
                self.summaries, tape, hidden, base, lengths_sorted, total_steps, like=inputs
            )
        tracker_state = (
            self.tracker.initial_state(batch_size, inputs) if self.tracker is not None else None
        )
        followed = torch.full((total_steps, batch_size), PAD, dtype=torch.long, device=device)
        pushed = base.repeat(total_steps, 1)  # (T, B): the row each step pushed, zero at PAD
        all_logits: List[torch.Tensor] = []
        all_type_logits: List[torch.Tensor] = []
        followed_types = torch.full_like(followed, PAD)

        for t in range(total_steps):
            k = running[t]
            columns = cursor[:k]
            # The rows a SHIFT would push (buffer top) and a REDUCE compose (top, second).
            read_rows = pointers[:k].gather(1, columns)
            nodes: Optional[torch.Tensor] = None
            extra: Optional[torch.Tensor] = None
            logits: Optional[torch.Tensor] = None
            if self.tracker is not None:
                assert tracker_state is not None
                nodes = tape.read(read_rows.flatten()).view(k, 3, self.node_dim)
                tracker_state, logits = self.tracker(
                    hidden(nodes[:, 0]),
                    hidden(nodes[:, 1]),
                    hidden(nodes[:, 2]),
                    (tracker_state[0][:k], tracker_state[1][:k]),
                    None if summaries is None else summaries.read(columns, buffer_start),
                )
                if logits is not None:
                    all_logits.append(logits)
                extra = tracker_state[0]
            type_logits: Optional[torch.Tensor] = None
            if self.type_classifier is not None:
                assert extra is not None
                type_logits = self.type_classifier(extra)
                all_type_logits.append(type_logits)
            if step_inputs is not None:
                own = step_inputs[t][:k]
                extra = own if extra is None else torch.cat([extra, own], dim=-1)

            # Which transition each running sentence takes at step t.
            follow_own: Optional[torch.Tensor] = None
            if mode == GIVEN:
                assert given_steps is not None
                action = given_steps[t, :k]
            else:
                assert logits is not None
                action = logits.argmax(dim=-1)
                if mode == MIXED:
                    assert given_steps is not None
                    follow_own = torch.rand(k, device=device) < self_transition_prob
                    given = given_steps[t, :k]
                    # Past the end of a shorter given sequence, its own prediction.
                    action = torch.where(follow_own | (given == PAD), action, given)
                # Only legal moves, so every prediction is a binary tree over all the words:
                # SHIFT below two stack items, REDUCE once the buffer is empty.
                action = torch.where(
                    columns[:, 1] < 3,
                    SHIFT,
                    torch.where(columns[:, 0] >= buffer_end[:k], REDUCE, action),
                )
            is_reduce = action == REDUCE
            if self.type_embedding is not None:
                # The type of each REDUCE: given where the given transition is followed.
                types = _step_types(type_logits, given_types, t, k, follow_own, mode)
                followed_types[t, :k] = torch.where(is_reduce, types, PAD)
                assert extra is not None
                extra = torch.cat([extra, self.type_embedding(types.clamp(min=0))], dim=-1)

            # REDUCE: S[t] := COMPOSE(left = stack second, right = stack top).
            new_rows = step_rows[:k] + t
            if sparse_compose:
                # Only the sentences that reduce now (a third of the rows on average).
                if reducing is not None:
                    rows = reducing[t]
                else:
                    rows = is_reduce.nonzero().squeeze(1)  # a host sync: CPU only by default
                if rows.numel():
                    if nodes is None:
                        children = tape.read(read_rows.index_select(0, rows)[:, 1:].flatten())
                        children = children.view(-1, 2, self.node_dim)
                    else:
                        children = nodes.index_select(0, rows)[:, 1:]
                    tape.write(
                        new_rows.index_select(0, rows),
                        self.compose(
                            children[:, 1],
                            children[:, 0],
                            None if extra is None else extra.index_select(0, rows),
                        ),
                    )
            else:
                # All running sentences at once; rows of those that shift are written but never
                # pointed to.
                if nodes is None:
                    children = tape.read(read_rows[:, 1:].flatten()).view(k, 2, self.node_dim)
                else:
                    children = nodes[:, 1:]
                tape.write(new_rows, self.compose(children[:, 1], children[:, 0], extra))

            # Push: a SHIFT puts the buffer top above the stack top, a REDUCE puts S[t] where
            # the stack second was.
            push_rows = torch.where(is_reduce, new_rows, read_rows[:, 0])
            slots = torch.where(is_reduce, columns[:, 2], columns[:, 1] + 1)
            pointers[:k].scatter_(1, slots.unsqueeze(1), push_rows.unsqueeze(1))
            if summaries is not None:
                summaries.push(hidden(tape.read(push_rows)), slots, t)
            columns += moves.index_select(0, is_reduce.long())
            followed[t, :k] = action
            pushed[t, :k] = push_rows

        top = pointers.gather(1, cursor[:, 1:2]).squeeze(1)
        output = SpinnOutput(
            sentence=hidden(tape.read(top.index_select(0, rank))),
            transitions=followed.t().index_select(0, rank),
            transition_logits=_unsort_steps(all_logits, active, rank) if all_logits else None,
            mode=mode,
        )
        if self.type_embedding is not None:
            output.reduce_types = followed_types.t().index_select(0, rank)
            if all_type_logits:
                output.reduce_type_logits = _unsort_steps(all_type_logits, active, rank)
        if return_nodes:
            if total_steps:
                nodes = tape.read(pushed.t().index_select(0, rank).flatten())
            else:
                nodes = inputs.new_zeros(0, self.node_dim)
            output.node_states = nodes.view(batch_size, total_steps, self.node_dim)
            output.node_hidden = hidden(output.node_states)
        return output

    def leaves(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The buffer: the node state of every real word, shape (num_real_tokens, node_dim) in
        ``mask`` order. Eq. 4's projection, or (``leaf="cell"``) the composition with zero
        children and the word vector as the node's input."""
        if self.projection is not None:
            return self.projection(inputs, mask)
        return self.compose.leaf(inputs[mask.bool()])


def _check_leaf(
    leaf: str,
    input_dim: int,
    node_input_dim: int,
    tracking_dim: int,
    projection_dropout: float,
    projection_batch_norm: bool,
) -> None:
    if leaf not in ("projection", "cell"):
        raise ValueError(f"leaf must be 'projection' or 'cell', got {leaf!r}")
    if node_input_dim < 0:
        raise ValueError(f"node_input_dim must be >= 0, got {node_input_dim}")
    if leaf == "cell":
        if node_input_dim != input_dim:
            raise ValueError(
                "leaf='cell' feeds the word vectors through the node input: node_input_dim "
                f"({node_input_dim}) must equal input_dim ({input_dim})"
            )
        if tracking_dim > 0:
            raise ValueError("leaf='cell' is for models without tracking (leaves come first)")
        if projection_dropout or projection_batch_norm:
            raise ValueError("projection dropout and batch norm need leaf='projection'")


def _node_input_columns(node_inputs: torch.Tensor, num_steps: int) -> List[torch.Tensor]:
    """The first ``num_steps`` columns of (B, T'', d) ``node_inputs``, one (B, d) per step."""
    if node_inputs.dim() != 3 or node_inputs.size(1) < num_steps:
        raise ValueError(
            f"node_inputs must have shape (batch, at least {num_steps} steps, dim), "
            f"got {tuple(node_inputs.shape)}"
        )
    return list(node_inputs[:, :num_steps].unbind(1))


class _SummaryState:
    """The stack and buffer summaries during one pass (sorted rows, see ``Spinn.forward``).

    Stack summaries go to a write-once tape of their own, one row per step (the summary of the
    stack after that step's push) and a zero row per sentence, with row pointers laid out like
    the stack's (columns 0-1 empty, item d at column d + 1): what autograd keeps stays
    O(B * T * summary_dim). Buffer summaries are computed once, before the first step."""

    def __init__(
        self,
        summaries: Summaries,
        tape: WriteOnceTape,
        hidden: Callable[[torch.Tensor], torch.Tensor],
        base: torch.Tensor,
        lengths: torch.Tensor,
        total_steps: int,
        like: torch.Tensor,
    ) -> None:
        batch_size = base.size(0)
        max_tokens = int(lengths.max()) if batch_size else 0
        device = base.device
        self.summaries = summaries
        positions = torch.arange(max_tokens, device=device)
        # Rows of real words only (padding words were never written): the zero row elsewhere.
        word_rows = torch.where(
            positions < lengths.unsqueeze(1), base.unsqueeze(1) + 1 + positions, base.unsqueeze(1)
        )
        words = hidden(tape.read(word_rows.flatten())).view(batch_size, max_tokens, -1)
        self.buffer = summaries.remaining(words, lengths)  # (B, N + 1, S)
        self.base = torch.arange(batch_size, device=device) * (1 + total_steps)
        self.tape = WriteOnceTape(
            batch_size * (1 + total_steps),
            2 * summaries.summary_dim,
            like=like,
            zero_rows=self.base,
        )
        self.pointers = self.base.unsqueeze(1).repeat(1, max_tokens + 2)

    def read(self, columns: torch.Tensor, buffer_start: int) -> torch.Tensor:
        """Shape (k, 2 * S): the summaries of the stack (stored with its top item) and of the
        buffer's rest, for the first k sorted sentences; ``columns`` is their cursor."""
        k = columns.size(0)
        top = self.pointers[:k].gather(1, columns[:, 1:2]).squeeze(1)
        stack = self.tape.read(top)[:, : self.summaries.summary_dim]
        shifted = (columns[:, 0] - buffer_start).view(k, 1, 1)
        buffer = self.buffer[:k].gather(1, shifted.expand(-1, -1, self.buffer.size(2))).squeeze(1)
        return torch.cat([stack, buffer], dim=-1)

    def push(self, pushed: torch.Tensor, slots: torch.Tensor, t: int) -> None:
        """Records the stack summaries after step t's push of items with h ``pushed`` into
        stack columns ``slots`` of the first k sorted sentences."""
        k = slots.size(0)
        below = self.tape.read(self.pointers[:k].gather(1, (slots - 1).unsqueeze(1)).squeeze(1))
        rows = self.base[:k] + 1 + t
        self.tape.write(rows, self.summaries.push(pushed, below))
        self.pointers[:k].scatter_(1, slots.unsqueeze(1), rows.unsqueeze(1))


def _step_types(
    type_logits: Optional[torch.Tensor],
    given_types: Optional[torch.Tensor],
    t: int,
    k: int,
    follow_own: Optional[torch.Tensor],
    mode: str,
) -> torch.Tensor:
    """Shape (k,): the REDUCE type of each running sentence at step t (sorted rows): the
    given type where the given transition is followed (given mode, or mixed mode's teacher-
    forced steps) and one is given, the classifier's choice otherwise."""
    predicted = type_logits.argmax(dim=-1) if type_logits is not None else None
    if given_types is None or mode == PREDICTED:
        assert predicted is not None
        return predicted
    given = given_types[t, :k]
    if predicted is None:
        return given
    use_given = given >= 0
    if follow_own is not None:
        use_given = use_given & ~follow_own
    return torch.where(use_given, given, predicted)


def _unsort_steps(
    per_step: List[torch.Tensor], active: torch.Tensor, rank: torch.Tensor
) -> torch.Tensor:
    """(B, T, ...) from one (running[t], ...) tensor per step in sorted row order; zeros where
    a sentence had ended. ``active``: (T, B) bool in sorted order; ``rank``: (B,)."""
    values = torch.cat(per_step)
    num_steps, batch_size = active.shape
    where = active.flatten().nonzero().squeeze(1)
    full = values.new_zeros((num_steps * batch_size,) + values.shape[1:])
    full = full.index_copy(0, where, values).view((num_steps, batch_size) + values.shape[1:])
    return full.transpose(0, 1).index_select(0, rank)
