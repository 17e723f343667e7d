"""The thin stack, step by step (Bowman et al. 2016, Algorithm 1), batched over sentences.

Memory: the prepared batch's write-once tape (``batch.py``): a zero row, the buffer, and one
row per step per sentence, each written once. A SHIFT pushes a pointer to the buffer row
instead of copying it into ``S[t]`` (the same stack, one copy fewer). The backpointer queue Q
of Algorithm 1 is a tensor of row pointers per sentence: there is no Python loop over
sentences, only over the T steps. What autograd keeps is O(B * T * D).

A step: read the buffer top and the two stack tops; let the tracker (if any) read them and the
parser (if any) score SHIFT and REDUCE; let the policy choose; compose the sentences that
REDUCE; push. Two ways through that one loop, chosen by device (``SpinnParts.static_shapes``):

* **sparse** (the CPU's): sentences run longest first, so those still running at step t are
  a prefix of the batch and every op works on a slice; only the sentences that REDUCE are
  composed (a third of the rows on average);
* **static shapes** (the GPU's): every step works on all B sentences and composes all of
  them; the moves of sentences that have ended are masked to PAD on the device, and nothing
  is read back to the host, so every step of a length bucket runs the same kernels on the
  same shapes whatever the moves and lengths: what a CUDA graph replays (``graphs.py``).

The stack's pointers: when the policy follows given transitions they are all known before
the first step (:func:`plan_stack`, a few batched tensor ops), and a step only reads,
composes and writes; otherwise they move in the loop, on the device (:class:`_Pointers`).
The composition and the tracker run in their form for a whole pass (``Composition.loop``,
``Tracker.loop``: one autograd function per step, one weight-gradient product per pass, the
tracker's buffer input projected once per word; docs/design.md).
"""

from typing import Callable, List, Optional, Tuple

import torch

from spinn_core.batch import PreparedBatch
from spinn_core.cells import Summaries
from spinn_core.output import SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import Choice, Step, TransitionPolicy, forced_moves
from spinn_core.tape import WriteOnceTape
from spinn_core.transitions import PAD, REDUCE, SHIFT


def run_thin_stack(
    batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy
) -> SpinnOutput:
    """Encodes ``batch`` step by step, the transitions chosen by ``policy``."""
    tape, order, steps = batch.tape, batch.order, batch.total_steps
    static = parts.uses_static_shapes(batch.device)
    # Everything below is in longest-first order: sorted row i is sentence order[i], whose
    # tape block starts at i * rows_per_sentence.
    step_numbers = torch.arange(steps, device=batch.device).unsqueeze(1)
    active = batch.num_steps.index_select(0, order).unsqueeze(0) > step_numbers  # (T, B)
    given = _sorted_steps(batch.transitions, order)  # (T, B) or None
    given_steps = _per_step(given, steps)
    given_types = _per_step(_sorted_steps(batch.reduce_types, order), steps)
    # How many sentences each step works on: all of them, or (sparse) those still running.
    running = [batch.batch_size] * steps if static else active.sum(dim=1).tolist()
    stack: _Stack
    if policy.follows_given and given is not None and parts.summaries is None:
        stack = _Planned(batch, given, static, running)
    else:
        stack = _Pointers(batch, static, running)
    reader = _Tracked(parts, batch, stack, policy) if parts.tracker is not None else _Untracked()
    record = _Record(batch, static, stack)
    compose = parts.compose.loop(stack.composed)
    node_inputs = batch.node_inputs
    if node_inputs is not None:
        node_inputs = node_inputs.index_select(0, order).transpose(0, 1)  # (T'', B, width)
    node_inputs_steps = _per_step(node_inputs, steps)

    for t, k in enumerate(running):
        # Rows of the buffer top, stack second and stack top: what a SHIFT would push and
        # the left and right child a REDUCE would compose.
        tops = stack.tops(t, k)
        tracker_state, logits, type_logits = reader.observe(tops, stack, t, k)
        choice = policy.choose(
            Step(
                t,
                logits,
                type_logits,
                given=_running(given_steps[t], k),
                given_types=_running(given_types[t], k),
                legality=stack.legality(k),
                order=order,
            )
        )
        if choice.parents is not None:
            # A beam: each row takes over its parent's hypothesis before moving.
            tops = tops.index_select(0, choice.parents)
            stack.reorder(k, choice.parents)
            tracker_state = reader.reorder(tracker_state, choice.parents)
            record.reorder(t, k, choice.parents)
        # Static shapes: sentences that have ended still run, but move no more.
        action = torch.where(active[t], choice.action, PAD) if static else choice.action
        extra = parts.extra_input(
            tracker_state, _running(node_inputs_steps[t], k), parts.type_vector(choice.types)
        )
        # REDUCE: S[t] := COMPOSE(left = stack second, right = stack top), for the rows
        # ``rows`` of the running sentences (None: all of them, whatever they do).
        rows, children, written = stack.reductions(t, k, tops, action)
        if children.numel():
            if rows is not None and extra is not None:
                extra = extra.index_select(0, rows)
            compose.onto(tape, children, written, extra)
        # Push: the buffer top for a SHIFT, S[t] in place of its children for a REDUCE.
        pushed = stack.push(t, k, action, tops)
        reader.pushed(pushed, stack, t, k)
        record.step(t, k, choice, action, pushed, logits, type_logits)

    record.logits += reader.logits_after_loop()
    top = tape.read(stack.top().index_select(0, batch.rank))
    return record.output(batch, parts, policy, top, active)


def plan_stack(
    transitions: torch.Tensor, lengths: torch.Tensor, base: torch.Tensor, max_tokens: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every step's pointers for given (valid) transitions, before the first step.

    ``transitions``: (B, T) SHIFT/REDUCE, PAD after each row's end; ``lengths`` (B,); ``base``
    (B,): each sentence's zero row, its words and steps after it (``batch.py``'s layout).
    Returns ``tops`` (T, B, 3), the rows of the buffer top, stack second and stack top before
    each step (the zero row where there is none); ``pushed`` (T, B), the row each step pushes
    (zero row at PAD); and ``top`` (B,), the stack top after the last step. Batched over
    sentences and steps (cumulative sums, a sort and a binary search): nothing is read back
    to the host.
    """
    transitions = transitions.contiguous()
    num_steps = transitions.size(1)
    device = transitions.device
    is_shift, is_reduce = transitions == SHIFT, transitions == REDUCE
    position = torch.arange(num_steps, device=device)
    shifted = is_shift.long().cumsum(dim=1)  # words shifted after each step
    depth = (is_shift.long() - is_reduce.long()).cumsum(dim=1)  # stack depth after it
    empty = base.unsqueeze(1)
    words = empty + 1 + torch.arange(max_tokens, device=device)
    # The k-th SHIFT pushes word k, a REDUCE its own row S[t].
    leaf = words.gather(1, (shifted - 1).clamp(0, max_tokens - 1))
    node = torch.where(is_reduce, empty + 1 + max_tokens + position, empty)
    pushed = torch.where(is_shift, leaf, node)
    # What lies below a pushed node: the latest earlier node that left the stack one item
    # shallower, found by binary search among the steps sorted by (depth after, step).
    is_step = is_shift | is_reduce
    key = torch.where(is_step, depth, num_steps + 1) * num_steps + position
    sorted_keys, by_key = key.sort(dim=1)
    found = torch.searchsorted(sorted_keys, (depth - 1) * num_steps + position) - 1
    candidate = by_key.gather(1, found.clamp(min=0))
    is_below = (found >= 0) & (key.gather(1, candidate) // num_steps == depth - 1)
    below = torch.where(is_below, pushed.gather(1, candidate), empty)
    # Before step t: the word after those shifted so far (none past the last), what step
    # t - 1 pushed, and what lay below it.
    before = shifted - is_shift.long()
    buffer_top = torch.where(
        before < lengths.unsqueeze(1), words.gather(1, before.clamp(max=max_tokens - 1)), empty
    )
    top = torch.cat([empty, pushed[:, :-1]], dim=1)
    second = torch.cat([empty, below[:, :-1]], dim=1)
    tops = torch.stack([buffer_top, second, top], dim=2).transpose(0, 1).contiguous()
    last = (is_step.sum(dim=1) - 1).clamp(min=0).unsqueeze(1)
    final = torch.where(is_step[:, 0], pushed.gather(1, last).squeeze(1), base)
    return tops, pushed.t().contiguous(), final


class _Stack:
    """What the loop asks of the stack's pointers (sorted rows; the first k run at step t)."""

    # Rows the composition will see in the pass, and tracker steps of all sentences in all.
    composed: int
    steps: int
    # (T, B) the transitions followed, when known before the first step (given ones).
    followed: Optional[torch.Tensor] = None
    # (T, B) the row each step pushed, when known before the first step.
    pushed: Optional[torch.Tensor] = None

    def tops(self, t: int, k: int) -> torch.Tensor:
        raise NotImplementedError

    def tracker_rows(self, t: int, k: int, tops: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """The rows the tracker reads: the buffer tops (k,), and stack second and top (2k,)."""
        return tops[:, 0], tops[:, 1:].flatten()

    def legality(self, k: int) -> Optional[Callable]:
        return None

    def reductions(
        self, t: int, k: int, tops: torch.Tensor, action: torch.Tensor
    ) -> Tuple[Optional[torch.Tensor], torch.Tensor, torch.Tensor]:
        """(rows, children, written): which running rows are composed (None: all), the tape
        rows of their left and right children (flat, left first) and the rows they write."""
        raise NotImplementedError

    def push(self, t: int, k: int, action: torch.Tensor, tops: torch.Tensor):
        return None

    def reorder(self, k: int, parents: torch.Tensor) -> None:
        raise ValueError("a stack of given transitions cannot follow a beam")

    def top(self) -> torch.Tensor:
        raise NotImplementedError


def _sorted_base(batch: PreparedBatch) -> torch.Tensor:
    return torch.arange(batch.batch_size, device=batch.device) * batch.rows_per_sentence


class _Planned(_Stack):
    """The stack of given transitions, every pointer planned before the first step."""

    def __init__(
        self, batch: PreparedBatch, given: torch.Tensor, static: bool, running: List[int]
    ) -> None:
        base = _sorted_base(batch)
        lengths = batch.lengths.index_select(0, batch.order)
        self.all_tops, self.pushed, self.final = plan_stack(
            given.t(), lengths, base, batch.max_tokens
        )
        self.followed = given
        self.steps = sum(running)
        total_steps = len(running)
        first = base + 1 + batch.max_tokens
        # Per step: every sentence's tops, buffer top and stack second and top.
        self.step_tops = list(self.all_tops.unbind())
        self.buffer_tops = list(self.all_tops[:, :, 0].unbind())
        self.stacks = list(self.all_tops[:, :, 1:].reshape(total_steps, -1).unbind())
        self.rows: Optional[List[torch.Tensor]] = None
        if static:
            written = first + torch.arange(total_steps, device=base.device).unsqueeze(1)
            self.children, self.written = self.stacks, list(written.unbind())
            self.composed = self.steps
            return
        # Sparse: the running rows that REDUCE at each step, their children and rows: one
        # host synchronisation here, none in the loop.
        reduces = (given == REDUCE).nonzero()  # (t, row) pairs, by step
        counts = torch.bincount(reduces[:, 0], minlength=total_steps).tolist()
        self.composed = len(reduces)
        step, row = reduces[:, 0], reduces[:, 1]
        self.rows = list(row.split(counts))
        children = self.all_tops[step, row, 1:].flatten()
        self.children = list(children.split([2 * count for count in counts]))
        self.written = list(first.index_select(0, row).add_(step).split(counts))

    def tops(self, t: int, k: int) -> torch.Tensor:
        return _prefix(self.step_tops[t], k)

    def tracker_rows(self, t: int, k: int, tops: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return _prefix(self.buffer_tops[t], k), _prefix(self.stacks[t], 2 * k)

    def reductions(self, t, k, tops, action):
        return None if self.rows is None else self.rows[t], self.children[t], self.written[t]

    def top(self) -> torch.Tensor:
        return self.final


class _Pointers(_Stack):
    """The stack of a policy that chooses as it goes. Row pointers per sorted sentence: the
    stack (Q of Algorithm 1) in columns 0..N+1, item d (1 = bottom) at column d + 1 above two
    columns pointing at the zero row, then the buffer: column N + 2 + j points at word j, or
    at the zero row past the last word. The cursor holds, per sentence, the columns of the
    buffer top, stack second and stack top: [N + 2 + words shifted, depth, depth + 1] (the
    stack's two tops bottom first: a REDUCE's left and right child). An empty stack or buffer
    thus reads the zero row without a test."""

    def __init__(self, batch: PreparedBatch, static: bool, running: List[int]) -> None:
        device, max_tokens = batch.device, batch.max_tokens
        base = _sorted_base(batch).unsqueeze(1)
        self.first_node = base.squeeze(1) + 1 + max_tokens
        self.buffer_start = max_tokens + 2
        lengths = batch.lengths.index_select(0, batch.order)
        positions = torch.arange(max_tokens + 1, device=device)
        self.pointers = torch.cat(
            [
                base.expand(-1, self.buffer_start),
                torch.where(positions < lengths.unsqueeze(1), base + 1 + positions, base),
            ],
            dim=1,
        )
        self.cursor = (torch.arange(3, device=device) - 1).repeat(batch.batch_size, 1)
        self.cursor[:, 0].fill_(self.buffer_start)
        self.buffer_end = self.buffer_start + lengths
        # How each move shifts the cursor, by action + 1: PAD (none), SHIFT, REDUCE.
        self.moves = torch.zeros(3, 3, dtype=torch.long, device=device)
        self.moves[1].fill_(1)
        self.moves[2, 1:].fill_(-1)
        self.static = static
        self.steps = sum(running)
        # Any policy's tree over n words has n - 1 REDUCEs.
        self.composed = self.steps if static else int((lengths - 1).clamp(min=0).sum())
        self.new_rows = self.first_node

    def tops(self, t: int, k: int) -> torch.Tensor:
        return self.pointers[:k].gather(1, self.cursor[:k])

    def legality(self, k: int) -> Callable:
        columns, end = self.cursor[:k], self.buffer_end[:k]

        def legality() -> Tuple[torch.Tensor, torch.Tensor]:
            # Fewer than two items on the stack (stack top's column below 3); no word left
            # (a sentence that has ended must shift, and is masked).
            return forced_moves(columns[:, 2] < 3, columns[:, 0] >= end)

        return legality

    def reductions(self, t, k, tops, action):
        self.new_rows = self.first_node[:k] + t
        if self.static:
            return None, tops[:, 1:].flatten(), self.new_rows
        rows = (action == REDUCE).nonzero().squeeze(1)
        return rows, tops[:, 1:].index_select(0, rows).flatten(), self.new_rows[rows]

    def push(self, t: int, k: int, action: torch.Tensor, tops: torch.Tensor) -> torch.Tensor:
        # A sentence that has ended (PAD) pushes its top back where it is.
        shifted = torch.where(action == SHIFT, tops[:, 0], tops[:, 2])
        pushed = torch.where(action == REDUCE, self.new_rows, shifted)
        columns = self.cursor[:k]
        columns += self.moves.index_select(0, action + 1)
        # The new stack top's column is where the pushed row goes.
        self.pointers[:k].scatter_(1, columns[:, 2:], pushed.unsqueeze(1))
        return pushed

    def reorder(self, k: int, parents: torch.Tensor) -> None:
        self.cursor[:k] = self.cursor[:k].index_select(0, parents)
        self.pointers[:k] = self.pointers[:k].index_select(0, parents)

    def top(self) -> torch.Tensor:
        return self.pointers.gather(1, self.cursor[:, 2:]).squeeze(1)


def _sorted_steps(per_step: Optional[torch.Tensor], order: torch.Tensor) -> Optional[torch.Tensor]:
    """(B, T) -> (T, B) in longest-first order."""
    return None if per_step is None else per_step.index_select(0, order).t().contiguous()


def _per_step(values: Optional[torch.Tensor], count: int) -> List[Optional[torch.Tensor]]:
    """(T, B, ...) -> one (B, ...) tensor for each of the first ``count`` steps (one op for
    all: unbind); Nones for None."""
    if values is None:
        return [None] * count
    return [step for step in values.unbind(0)[:count]]


def _prefix(values: torch.Tensor, k: int) -> torch.Tensor:
    """The first k rows of ``values``: the running sentences'."""
    return values if values.size(0) == k else values[:k]


def _running(values: Optional[torch.Tensor], k: int) -> Optional[torch.Tensor]:
    """The first k rows of ``values``; None stays None."""
    return None if values is None else _prefix(values, k)


class _Untracked:
    """A model without a tracker: no tracker state, and no parser speaks."""

    def observe(self, tops: torch.Tensor, stack: _Stack, t: int, k: int):
        return None, None, None

    def pushed(self, pushed, stack: _Stack, t: int, k: int) -> None:
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
    of one per step)."""

    def __init__(
        self, parts: SpinnParts, batch: PreparedBatch, stack: _Stack, policy: TransitionPolicy
    ) -> None:
        assert parts.tracker is not None
        self.parts = parts
        self.tracker = parts.tracker
        self.tape = tape = batch.tape
        self.hidden = parts.compose.hidden
        self.hidden_dim = parts.compose.hidden_dim
        self.state = self.tracker.initial_state(batch.batch_size, batch.inputs)
        self.classifier = self.tracker.transition_classifier
        self.step_logits = policy.needs_parser
        self.states: List[torch.Tensor] = []  # h of every step, when scored after the loop
        # The words' tape rows (sorted blocks, mask order within a block; every position's
        # with dense leaves) and, per tape row, the index of its word (the empty buffer's
        # index for the zero rows).
        word_rows = batch.word_rows()
        word_rows = word_rows.flatten() if batch.dense else word_rows[batch.mask]
        self.loop = self.tracker.loop(
            parts.parser_view(self.hidden(tape.read(word_rows))), stack.steps
        )
        self.word_index = torch.full(
            (tape.data.size(0),), self.loop.empty, dtype=torch.long, device=batch.device
        ).index_copy_(0, word_rows, torch.arange(word_rows.numel(), device=batch.device))
        self.summaries = (
            _SummaryState(
                parts.summaries,
                tape,
                lambda nodes: parts.parser_view(self.hidden(nodes)),
                batch,
            )
            if parts.summaries is not None
            else None
        )

    def observe(self, tops: torch.Tensor, stack: _Stack, t: int, k: int):
        buffer_tops, stack_rows = stack.tracker_rows(t, k, tops)
        # h of [stack second, stack top].
        h = self.parts.parser_view(self.tape.read(stack_rows, self.hidden_dim))
        summaries = None
        if self.summaries is not None:
            assert isinstance(stack, _Pointers)
            summaries = self.summaries.read(stack.cursor[:k], stack.buffer_start)
        self.state = self.loop(
            self.word_index.index_select(0, buffer_tops),
            h.view(k, 2, self.hidden_dim),
            _first(self.state, k),
            summaries,
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

    def pushed(self, pushed, stack: _Stack, t: int, k: int) -> None:
        if self.summaries is not None:
            assert isinstance(stack, _Pointers)
            nodes = self.parts.parser_view(self.hidden(self.tape.read(pushed)))
            self.summaries.push(nodes, stack.cursor[:k, 2], t)

    def logits_after_loop(self) -> List[torch.Tensor]:
        """The logits of every step not scored during the loop, in step order (as the
        per-step logits would have been recorded)."""
        if not self.states:
            return []
        assert self.classifier is not None
        return [self.classifier(torch.cat(self.states))]


class _Record:
    """What the steps did, in sorted order, and the output made from it."""

    def __init__(self, batch: PreparedBatch, static: bool, stack: _Stack) -> None:
        shape = (batch.total_steps, batch.batch_size)
        device = batch.device
        self.static = static
        self.chosen = stack.followed is None
        # (T, B): the moves followed and the row each step pushed (zero rows after the end).
        self.followed = (
            stack.followed
            if stack.followed is not None
            else torch.full(shape, PAD, dtype=torch.long, device=device)
        )
        self.pushed = stack.pushed
        if self.pushed is None and batch.return_nodes:
            self.pushed = _sorted_base(batch).repeat(batch.total_steps, 1)
        self.followed_types: Optional[torch.Tensor] = None
        self.logits: List[torch.Tensor] = []
        self.type_logits: List[torch.Tensor] = []
        self.log_probs: List[torch.Tensor] = []
        self.entropy: List[torch.Tensor] = []

    def step(
        self,
        t: int,
        k: int,
        choice: Choice,
        action: torch.Tensor,
        pushed: Optional[torch.Tensor],
        logits: Optional[torch.Tensor],
        type_logits: Optional[torch.Tensor],
    ) -> None:
        if self.chosen:
            self.followed[t, :k] = action
            if self.pushed is not None and pushed is not None:
                self.pushed[t, :k] = pushed
        if logits is not None:
            self.logits.append(logits)
        if type_logits is not None:
            self.type_logits.append(type_logits)
        if choice.types is not None:
            if self.followed_types is None:
                self.followed_types = torch.full_like(self.followed, PAD)
            self.followed_types[t, :k] = torch.where(action == REDUCE, choice.types, PAD)
        if choice.log_prob is not None:
            self.log_probs.append(choice.log_prob)
        if choice.entropy is not None:
            self.entropy.append(choice.entropy)

    def reorder(self, t: int, k: int, parents: torch.Tensor) -> None:
        """The first k rows' moves before step t become their parents' (a beam). Only the
        moves and pushed rows follow: the logits and log-probabilities recorded per step stay
        where they were computed (a beam's searching pass reads only its transitions)."""
        self.followed[:t, :k] = self.followed[:t, :k].index_select(1, parents)
        if self.pushed is not None:
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

        def unsorted(per_step: List[torch.Tensor]) -> Optional[torch.Tensor]:
            return _unsort_steps(per_step, active, rank, self.static)

        output = SpinnOutput(
            sentence=hidden(top),
            transitions=self.followed.t().index_select(0, rank),
            transition_logits=unsorted(self.logits),
            mode=policy.mode,
            reduce_type_logits=unsorted(self.type_logits),
            action_log_probs=unsorted(self.log_probs),
            action_entropy=unsorted(self.entropy),
        )
        if parts.type_embedding is not None and self.followed_types is not None:
            output.reduce_types = self.followed_types.t().index_select(0, rank)
        if batch.return_nodes:
            assert self.pushed is not None
            pushed = self.pushed
            if self.static and self.chosen:
                # Steps after a sentence's end pushed its top back: their nodes are zeros.
                pushed = torch.where(active, pushed, _sorted_base(batch))
            nodes = batch.tape.read(pushed.t().index_select(0, rank).flatten())
            output.node_states = nodes.view(batch.batch_size, batch.total_steps, parts.node_dim)
            output.node_hidden = hidden(output.node_states)
        return output


def _unsort_steps(
    per_step: List[torch.Tensor], active: torch.Tensor, rank: torch.Tensor, static: bool
) -> Optional[torch.Tensor]:
    """(B, T, ...) from the values of every step, in sorted row order: one (running[t], ...)
    tensor per step, or all of them in one; zeros where a sentence had ended; None for no
    steps recorded. ``active``: (T, B) bool in sorted order; ``rank``: (B,)."""
    if not per_step:
        return None
    values = torch.cat(per_step)
    num_steps, batch_size = active.shape
    shape = (num_steps, batch_size) + values.shape[1:]
    if static:
        # Every step recorded all B rows: masked, with no index of data-dependent size.
        where = active.view(active.shape + (1,) * (values.dim() - 1))
        full = torch.where(where, values.view(shape), 0)
    else:
        index = active.flatten().nonzero().squeeze(1)
        full = values.new_zeros((num_steps * batch_size,) + values.shape[1:])
        full = full.index_copy(0, index, values).view(shape)
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
        batch: PreparedBatch,
    ) -> None:
        batch_size, max_tokens, total_steps = batch.batch_size, batch.max_tokens, batch.total_steps
        device = batch.device
        base = _sorted_base(batch)
        lengths = batch.lengths.index_select(0, batch.order)
        self.summaries = summaries
        positions = torch.arange(max_tokens, device=device)
        # Rows of real words only (padding words may be unwritten): the zero row elsewhere.
        word_rows = torch.where(
            positions < lengths.unsqueeze(1), base.unsqueeze(1) + 1 + positions, base.unsqueeze(1)
        )
        words = hidden(tape.read(word_rows.flatten())).view(batch_size, max_tokens, -1)
        self.buffer = summaries.remaining(words, lengths, packed=not batch.dense)  # (B, N + 1, S)
        self.base = torch.arange(batch_size, device=device) * (1 + total_steps)
        self.tape = WriteOnceTape(
            batch_size * (1 + total_steps),
            2 * summaries.summary_dim,
            like=batch.inputs,
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
