"""The thin stack, step by step (Bowman et al. 2016, Algorithm 1), batched over sentences.

Memory: the prepared batch's write-once tape (``batch.py``): a zero row, the buffer, and one
row per step per sentence, each written once. A SHIFT pushes a pointer to the buffer row
instead of copying it into ``S[t]`` (the same stack, one copy fewer). The backpointer queue Q
of Algorithm 1 is a tensor of row pointers per sentence, with a cursor per sentence (buffer
position and depth) updated with tensor ops: there is no Python loop over sentences, only over
the T steps. What autograd keeps is O(B * T * D).

A step: read the buffer top and the two stack tops; let the tracker (if any) read them and the
parser (if any) score SHIFT and REDUCE; let the policy choose; compose the sentences that
REDUCE; push. The loop keeps the ops few: sentences run longest first, so those still running
at step t are a prefix of the batch and every op works on a slice; the stack's two tops are
one read; only the sentences that REDUCE are composed (their indices known before the loop
when the policy follows given transitions, so that GPUs need no host synchronisation inside
the loop). The composition and the tracker run in their form for a whole pass
(``Composition.loop``, ``Tracker.loop``: one autograd function per step, one weight-gradient
product per pass, the tracker's buffer input projected once per word; docs/design.md).
"""

from typing import Callable, List, Optional, Tuple

import torch

from spinn_allennlp.core.batch import PreparedBatch
from spinn_allennlp.core.cells import Summaries
from spinn_allennlp.core.output import SpinnOutput
from spinn_allennlp.core.parts import SpinnParts
from spinn_allennlp.core.policies import Choice, Step, TransitionPolicy
from spinn_allennlp.core.tape import WriteOnceTape
from spinn_allennlp.core.transitions import PAD, REDUCE


def run_thin_stack(
    batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy
) -> SpinnOutput:
    """Encodes ``batch`` step by step, the transitions chosen by ``policy``."""
    tape = batch.tape
    device = batch.device
    batch_size, max_tokens, total_steps = batch.batch_size, batch.max_tokens, batch.total_steps
    order, rank = batch.order, batch.rank

    # Everything below is in longest-first order: sorted row i is sentence order[i], whose
    # tape block starts at i * rows_per_sentence.
    step_numbers = torch.arange(total_steps, device=device).unsqueeze(1)
    active = batch.num_steps.index_select(0, order).unsqueeze(0) > step_numbers  # (T, B)
    given = _sorted_steps(batch.transitions, order)  # (T, B) or None
    given_types = _sorted_steps(batch.reduce_types, order)
    planned = given if policy.follows_given else None
    sparse_compose = (
        parts.sparse_compose
        if parts.sparse_compose is not None
        else device.type == "cpu" or planned is not None
    )
    # When the moves are known, which rows REDUCE at each step (and how many run) cost one
    # host sync here and none in the loop.
    reducing: Optional[List[torch.Tensor]] = None
    if planned is not None and sparse_compose:
        reduce_steps = planned == REDUCE
        counts = torch.stack([active.sum(dim=1), reduce_steps.sum(dim=1)]).tolist()
        running = counts[0]
        reducing = list(reduce_steps.nonzero()[:, 1].split(counts[1]))
        composed = sum(counts[1])
    else:
        # Any policy's tree over n words has n - 1 REDUCEs.
        reduces = (batch.lengths - 1).clamp(min=0).sum().view(1)
        counts = torch.cat([active.sum(dim=1), reduces]).tolist()
        running, composed = counts[:-1], counts[-1]
    # The rows the composition and the tracker will see in all (their loop layers keep
    # exactly that many for the pass's weight gradients).
    composed = composed if sparse_compose else sum(running)

    base = torch.arange(batch_size, device=device) * batch.rows_per_sentence
    step_rows = base + 1 + max_tokens  # + t: the row S[t]
    # One input per step for the node it makes (unbind: one cheap backward for all steps).
    node_inputs: List[Optional[torch.Tensor]] = [None] * total_steps
    if batch.node_inputs is not None:
        node_inputs = list(batch.node_inputs.index_select(0, order)[:, :total_steps].unbind(1))

    # Row pointers per sorted sentence: the stack (Q of Algorithm 1) in columns 0..N+1, item
    # d (1 = bottom) at column d + 1 above two columns pointing at the zero row, then the
    # buffer: column N + 2 + j points at word j, or at the zero row past the last word.
    # cursor holds, per sentence, the columns of the buffer top, stack second and stack top:
    # [N + 2 + words shifted, depth, depth + 1] (the stack's two tops bottom first: a
    # REDUCE's left and right child). An empty stack or buffer thus reads the zero row
    # without a test.
    buffer_start = max_tokens + 2
    lengths = batch.lengths.index_select(0, order)
    positions = torch.arange(max_tokens + 1, device=device)
    pointers = torch.cat(
        [
            base.unsqueeze(1).expand(-1, buffer_start),
            torch.where(
                positions < lengths.unsqueeze(1),
                base.unsqueeze(1) + 1 + positions,
                base.unsqueeze(1),
            ),
        ],
        dim=1,
    )
    cursor = torch.tensor([buffer_start, 0, 1], device=device).repeat(batch_size, 1)
    buffer_end = buffer_start + lengths
    # How a SHIFT and a REDUCE move the cursor.
    moves = torch.tensor([[1, 1, 1], [0, -1, -1]], device=device)

    reader = (
        _Tracked(parts, batch, tape, base, lengths, buffer_start, sum(running), policy)
        if parts.tracker is not None
        else _Untracked(tape, parts.node_dim)
    )
    record = _Record(total_steps, batch_size, base, device)
    compose = parts.compose.loop(composed)

    for t in range(total_steps):
        k = running[t]
        columns = cursor[:k]
        # The rows a SHIFT would push (buffer top) and a REDUCE compose (second, top).
        read_rows = pointers[:k].gather(1, columns)
        tracker_state, logits, type_logits = reader.observe(read_rows, columns)
        step = Step(
            t,
            logits,
            type_logits,
            given=_running(given, t, k),
            given_types=_running(given_types, t, k),
            legality=_legality(columns, buffer_end[:k]),
        )
        choice = policy.choose(step)
        if choice.parents is not None:
            # A beam: each row takes over its parent's hypothesis before moving.
            parents = choice.parents
            read_rows = read_rows.index_select(0, parents)
            cursor[:k] = cursor[:k].index_select(0, parents)
            pointers[:k] = pointers[:k].index_select(0, parents)
            tracker_state = reader.reorder(tracker_state, parents)
            record.reorder(t, k, parents)
        is_reduce = choice.action == REDUCE
        extra = parts.extra_input(
            tracker_state,
            _running(node_inputs[t], None, k),
            parts.type_vector(choice.types),
        )

        # REDUCE: S[t] := COMPOSE(left = stack second, right = stack top): children[:, 0] and
        # children[:, 1].
        new_rows = step_rows[:k] + t
        if sparse_compose:
            # Only the sentences that reduce now (a third of the rows on average).
            rows = reducing[t] if reducing is not None else is_reduce.nonzero().squeeze(1)
            if rows.numel():
                tape.write(
                    new_rows.index_select(0, rows),
                    compose(
                        reader.children(read_rows, rows),
                        None if extra is None else extra.index_select(0, rows),
                    ),
                )
        else:
            # All running sentences at once; rows of those that shift are written but never
            # pointed to.
            tape.write(new_rows, compose(reader.children(read_rows, None), extra))

        # Push: a SHIFT puts the buffer top above the stack top, a REDUCE puts S[t] where the
        # stack second was.
        push_rows = torch.where(is_reduce, new_rows, read_rows[:, 0])
        slots = torch.where(is_reduce, columns[:, 1], columns[:, 2] + 1)
        pointers[:k].scatter_(1, slots.unsqueeze(1), push_rows.unsqueeze(1))
        reader.pushed(push_rows, slots, t)
        columns += moves.index_select(0, is_reduce.long())
        record.step(t, k, choice, push_rows, logits, type_logits)

    top = pointers.gather(1, cursor[:, 2:3]).squeeze(1)
    record.logits += reader.logits_after_loop()
    return record.output(batch, parts, policy, tape.read(top.index_select(0, rank)), active)


def _sorted_steps(per_step: Optional[torch.Tensor], order: torch.Tensor) -> Optional[torch.Tensor]:
    """(B, T) -> (T, B) in longest-first order."""
    return None if per_step is None else per_step.index_select(0, order).t().contiguous()


def _running(per_step: Optional[torch.Tensor], t: Optional[int], k: int) -> Optional[torch.Tensor]:
    """Row t's first k columns of a (T, B) tensor (the whole of a (B, ...) one when t is
    None): the running sentences' values at step t; None stays None."""
    if per_step is None:
        return None
    return per_step[:k] if t is None else per_step[t, :k]


def _legality(columns: torch.Tensor, buffer_end: torch.Tensor) -> Callable:
    # Fewer than two items on the stack (the stack top's column is below 3); no word left.
    return lambda: (columns[:, 2] < 3, columns[:, 0] >= buffer_end)


class _Untracked:
    """A model without a tracker: a step reads only the children of the sentences that
    REDUCE, and no parser speaks."""

    def __init__(self, tape: WriteOnceTape, node_dim: int) -> None:
        self.tape = tape
        self.node_dim = node_dim

    def observe(self, read_rows: torch.Tensor, columns: torch.Tensor):
        return None, None, None

    def children(self, read_rows: torch.Tensor, rows: Optional[torch.Tensor]) -> torch.Tensor:
        return _children(self.tape, read_rows, rows, self.node_dim)

    def pushed(self, push_rows: torch.Tensor, slots: torch.Tensor, t: int) -> None:
        pass

    def reorder(
        self, tracker_state: Optional[torch.Tensor], parents: torch.Tensor
    ) -> Optional[torch.Tensor]:
        return None

    def logits_after_loop(self) -> List[torch.Tensor]:
        return []


def _first(state: Tuple[torch.Tensor, torch.Tensor], k: int):
    """The first k rows of the tracker's state (h, c): the sentences still running; the state
    itself while none has ended (no slice for autograd to undo)."""
    if state[0].size(0) == k:
        return state
    return state[0][:k], state[1][:k]


def _children(
    tape: WriteOnceTape, read_rows: torch.Tensor, rows: Optional[torch.Tensor], node_dim: int
) -> torch.Tensor:
    """Shape (r, 2, node_dim): [stack second, stack top] (left and right child) of the running
    sentences ``rows`` (all if None)."""
    if rows is not None:
        read_rows = read_rows.index_select(0, rows)
    return tape.read(read_rows[:, 1:].flatten()).view(-1, 2, node_dim)


class _Tracked:
    """A model with a tracker (§3.3): every step, the buffer top, stack second and stack top of
    every running sentence feed the tracking LSTM (and the stack and buffer summaries, with
    them), whose state scores the transitions (with a parser) and joins the composition's
    input. The tracker reads h of the stack's two tops (the first ``hidden_dim`` columns of
    their rows); the buffer top is a word, whose share of the tracker's input product was
    computed for every word before the first step (``cells.TrackerLoop``): a step passes its
    index. A REDUCE reads its children's whole rows.

    The parser's logits are computed at each step when the policy reads them
    (``policy.needs_parser``), else once for every step after the last (one product instead
    of one per step). ``steps``: the steps of all sentences in all."""

    def __init__(
        self,
        parts: SpinnParts,
        batch: PreparedBatch,
        tape: WriteOnceTape,
        base: torch.Tensor,
        lengths: torch.Tensor,
        buffer_start: int,
        steps: int,
        policy: TransitionPolicy,
    ) -> None:
        assert parts.tracker is not None
        self.parts = parts
        self.tracker = parts.tracker
        self.tape = tape
        self.hidden = parts.compose.hidden
        self.hidden_dim = parts.compose.hidden_dim
        self.node_dim = parts.node_dim
        self.buffer_start = buffer_start
        self.state = self.tracker.initial_state(batch.batch_size, batch.inputs)
        self.classifier = self.tracker.transition_classifier
        self.step_logits = policy.needs_parser
        self.states: List[torch.Tensor] = []  # h of every step, when scored after the loop
        # The words' tape rows (sorted blocks, mask order within a block) and, per tape row,
        # the index of its word (the empty buffer's index for the zero rows).
        word_rows = batch.word_rows()[batch.mask]
        self.loop = self.tracker.loop(parts.parser_view(self.hidden(tape.read(word_rows))), steps)
        self.word_index = torch.full(
            (tape.data.size(0),), self.loop.empty, dtype=torch.long, device=batch.device
        ).index_copy_(0, word_rows, torch.arange(word_rows.numel(), device=batch.device))
        self.summaries = (
            _SummaryState(
                parts.summaries,
                tape,
                lambda nodes: parts.parser_view(self.hidden(nodes)),
                base,
                lengths,
                batch.total_steps,
                batch.inputs,
            )
            if parts.summaries is not None
            else None
        )

    def observe(self, read_rows: torch.Tensor, columns: torch.Tensor):
        k = read_rows.size(0)
        # h of [stack second, stack top].
        stack = self.parts.parser_view(self.tape.read(read_rows[:, 1:].flatten(), self.hidden_dim))
        self.state = self.loop(
            self.word_index.index_select(0, read_rows[:, 0]),
            stack.view(k, 2, self.hidden_dim),
            _first(self.state, k),
            None if self.summaries is None else self.summaries.read(columns, self.buffer_start),
        )
        logits = None
        if self.classifier is not None:
            if self.step_logits:
                logits = self.classifier(self.state[0])
            else:
                self.states.append(self.state[0])
        classifier = self.parts.type_classifier
        type_logits = classifier(self.state[0]) if classifier is not None else None
        return self.state[0], logits, type_logits

    def children(self, read_rows: torch.Tensor, rows: Optional[torch.Tensor]) -> torch.Tensor:
        return _children(self.tape, read_rows, rows, self.node_dim)

    def reorder(
        self, tracker_state: Optional[torch.Tensor], parents: torch.Tensor
    ) -> Optional[torch.Tensor]:
        """The running rows take over their ``parents``' tracker states (and stack
        summaries); returns the step's tracker output reordered likewise."""
        h, c = self.state
        self.state = h.index_select(0, parents), c.index_select(0, parents)
        if self.summaries is not None:
            self.summaries.reorder(parents)
        return self.state[0]

    def pushed(self, push_rows: torch.Tensor, slots: torch.Tensor, t: int) -> None:
        if self.summaries is not None:
            nodes = self.parts.parser_view(self.hidden(self.tape.read(push_rows)))
            self.summaries.push(nodes, slots, t)

    def logits_after_loop(self) -> List[torch.Tensor]:
        """The logits of every step not scored during the loop, in step order (as the
        per-step logits would have been recorded)."""
        if not self.states:
            return []
        assert self.classifier is not None
        return [self.classifier(torch.cat(self.states))]


class _Record:
    """What the steps did, in sorted order, and the output made from it."""

    def __init__(
        self, total_steps: int, batch_size: int, base: torch.Tensor, device: torch.device
    ) -> None:
        self.followed = torch.full((total_steps, batch_size), PAD, dtype=torch.long, device=device)
        self.followed_types: Optional[torch.Tensor] = None
        self.pushed = base.repeat(total_steps, 1)  # (T, B): the row each step pushed
        self.logits: List[torch.Tensor] = []
        self.type_logits: List[torch.Tensor] = []
        self.log_probs: List[torch.Tensor] = []
        self.entropy: List[torch.Tensor] = []

    def step(
        self,
        t: int,
        k: int,
        choice: Choice,
        push_rows: torch.Tensor,
        logits: Optional[torch.Tensor],
        type_logits: Optional[torch.Tensor],
    ) -> None:
        self.followed[t, :k] = choice.action
        self.pushed[t, :k] = push_rows
        if logits is not None:
            self.logits.append(logits)
        if type_logits is not None:
            self.type_logits.append(type_logits)
        if choice.types is not None:
            if self.followed_types is None:
                self.followed_types = torch.full_like(self.followed, PAD)
            self.followed_types[t, :k] = torch.where(choice.action == REDUCE, choice.types, PAD)
        if choice.log_prob is not None:
            self.log_probs.append(choice.log_prob)
        if choice.entropy is not None:
            self.entropy.append(choice.entropy)

    def reorder(self, t: int, k: int, parents: torch.Tensor) -> None:
        """The first k rows' moves before step t become their parents' (a beam). Only the
        moves and pushed rows follow: the logits and log-probabilities recorded per step stay
        where they were computed (a beam's searching pass reads only its transitions)."""
        self.followed[:t, :k] = self.followed[:t, :k].index_select(1, parents)
        self.pushed[:t, :k] = self.pushed[:t, :k].index_select(1, parents)
        if self.followed_types is not None:
            self.followed_types[:t, :k] = self.followed_types[:t, :k].index_select(1, parents)

    def output(
        self,
        batch: PreparedBatch,
        parts: SpinnParts,
        policy: TransitionPolicy,
        top: torch.Tensor,
        active: torch.Tensor,
    ) -> SpinnOutput:
        rank = batch.rank
        hidden = parts.compose.hidden
        output = SpinnOutput(
            sentence=hidden(top),
            transitions=self.followed.t().index_select(0, rank),
            transition_logits=_unsort_steps(self.logits, active, rank),
            mode=policy.mode,
            reduce_type_logits=_unsort_steps(self.type_logits, active, rank),
            action_log_probs=_unsort_steps(self.log_probs, active, rank),
            action_entropy=_unsort_steps(self.entropy, active, rank),
        )
        if parts.type_embedding is not None and self.followed_types is not None:
            output.reduce_types = self.followed_types.t().index_select(0, rank)
        if batch.return_nodes:
            nodes = batch.tape.read(self.pushed.t().index_select(0, rank).flatten())
            output.node_states = nodes.view(batch.batch_size, batch.total_steps, parts.node_dim)
            output.node_hidden = hidden(output.node_states)
        return output


def _unsort_steps(
    per_step: List[torch.Tensor], active: torch.Tensor, rank: torch.Tensor
) -> Optional[torch.Tensor]:
    """(B, T, ...) from one (running[t], ...) tensor per step in sorted row order; zeros where
    a sentence had ended; None for no steps recorded. ``active``: (T, B) bool in sorted order;
    ``rank``: (B,)."""
    if not per_step:
        return None
    values = torch.cat(per_step)
    num_steps, batch_size = active.shape
    where = active.flatten().nonzero().squeeze(1)
    full = values.new_zeros((num_steps * batch_size,) + values.shape[1:])
    full = full.index_copy(0, where, values).view((num_steps, batch_size) + values.shape[1:])
    return full.transpose(0, 1).index_select(0, rank)


class _SummaryState:
    """The stack and buffer summaries during one pass (sorted rows, see ``run_thin_stack``).

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
        top = self.pointers[:k].gather(1, columns[:, 2:3]).squeeze(1)
        stack = self.tape.read(top)[:, : self.summaries.summary_dim]
        shifted = (columns[:, 0] - buffer_start).view(k, 1, 1)
        buffer = self.buffer[:k].gather(1, shifted.expand(-1, -1, self.buffer.size(2))).squeeze(1)
        return torch.cat([stack, buffer], dim=-1)

    def reorder(self, parents: torch.Tensor) -> None:
        """The first k sorted sentences take over their ``parents``' stacks (a beam)."""
        k = parents.size(0)
        self.pointers[:k] = self.pointers[:k].index_select(0, parents)

    def push(self, pushed: torch.Tensor, slots: torch.Tensor, t: int) -> None:
        """Records the stack summaries after step t's push of items with h ``pushed`` into
        stack columns ``slots`` of the first k sorted sentences."""
        k = slots.size(0)
        below = self.tape.read(self.pointers[:k].gather(1, (slots - 1).unsqueeze(1)).squeeze(1))
        rows = self.base[:k] + 1 + t
        self.tape.write(rows, self.summaries.push(pushed, below))
        self.pointers[:k].scatter_(1, slots.unsqueeze(1), rows.unsqueeze(1))
