"""SPINN on a soft stack and a soft buffer (NSHRDLU Models 3 and 4): the parser's probabilities
are the strengths of differentiable stack and queue operations (the continuous stack and queue
of Grefenstette et al. 2015), so the loss of the task reaches the parser.

The continuous stack (Grefenstette et al. 2015, §3.1) holds values ``V[i]`` with strengths
``s[i]``. A step with pop strength ``u`` and push strength ``d`` removes ``u`` units of strength
from the top down, then appends its value with strength ``d``; a read returns the strength-
weighted sum of the values in the topmost unit of strength. With 0/1 strengths it is an
ordinary stack. SPINN's transitions map onto it like this:

* every step pushes exactly one node (SHIFT the buffer top, REDUCE the composition of the top
  two), so ``d = 1`` and the node pushed is the mixture
  ``p(SHIFT) * buffer_top + p(REDUCE) * COMPOSE(second, top)``;
* a REDUCE pops two nodes: ``u = 2 p(REDUCE)``;
* the buffer is a queue whose words have strength 1 and from whose front a step removes
  ``p(SHIFT)``: its read is the unit starting at ``c``, the strength consumed so far, i.e. a
  linear interpolation between words ``floor(c)`` and ``floor(c) + 1``.

Strengths as intervals. Element ``t`` (pushed at step ``t``) starts at level
``L_t = max(0, H_{t-1} - u_t)`` (``H`` the total strength, ``H_t = L_t + 1``) and occupies
``[L_t, L_t + 1]``; later pops cut it down to ``[min(L_t, M), min(L_t + 1, M)]`` where ``M`` is
the lowest level any later step popped down to. So the last element pushed is always the whole
top unit (the "top" read is a pointer, as in the thin stack), and the second unit
``[H - 2, H - 1]`` is a weighted sum over earlier elements, weights computed from the levels.

Memory. Values are written once per step into the thin stack's write-once tape
(``tape.WriteOnceTape``): rows ``1..N`` the buffer, row ``N + 1 + t`` the node pushed at step t.
The levels ``L_t`` go to a second write-once tape (one scalar per step). A soft read of the second
unit at step t is an autograd function that saves nothing: its backward recomputes the weights from
the levels on the tape (written once, so still as they were) and reads the values from the tape.
What autograd keeps is O(B * T * D) for the values and O(B * T) for the levels, linear in the number
of steps, as for the discrete thin stack (a naive version keeps every step's (B, t) weights, O(B *
T^2)). Time per step is O(t * D) for the second read: O(T^2 * D) a sentence.

Legal moves, softly: REDUCE is scaled by ``clamp(H - 1, 0, 1)`` (needs two units on the
stack) and SHIFT by ``clamp(N - c, 0, 1)`` (needs a word left), so 0/1 strengths of a valid
transition sequence are followed exactly, and the soft stack with one-hot strengths computes
what the discrete thin stack computes (``tests/core/test_soft_stack.py``, float64).

After its last step (T = 2N - 1) a sentence's stack is frozen: each further step pushes a copy
of its top at the top's level. The sentence vector is h of the top after the last step.
The discrete tree the soft pass prefers (``SpinnOutput.transitions``) follows the more probable
transition at each step, restricted to legal moves of a discrete stack run alongside.
"""

from typing import List

import torch

from spinn_core.batch import PreparedBatch
from spinn_core.output import SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import Step, TransitionPolicy, impose_forced
from spinn_core.tape import WriteOnceTape
from spinn_core.transitions import PAD, REDUCE, SHIFT


def unit_clamp(x: torch.Tensor) -> torch.Tensor:
    """``clamp(x, 0, 1)`` whose gradient is 1 on the closed interval [0, 1], boundaries
    included, and 0 outside. That is what ``torch.clamp`` passed back up to torch 2.13; from
    2.14 it passes nothing at the boundaries, which is exactly where a stack with 0/1
    strengths (straight-through Gumbel) puts the legality factors, so the gradient would
    change with the torch release. Written out, it is the same on every release."""
    inside = (x >= 0) & (x <= 1)
    return torch.where(inside, x, x.detach().clamp(0, 1))


def second_unit_weights(levels: torch.Tensor) -> torch.Tensor:
    """Shape (B, t - 1): how much of each element 0..t-2 lies in the stack's second unit of
    strength after step t - 1, given ``levels`` (B, t), the level ``L`` each element was pushed
    at (the last element, t - 1, is the whole top unit)."""
    return _second_unit(levels)[0]


def _second_unit(levels: torch.Tensor):
    """The weights and what their derivatives need: the lowest later level ``M_i`` of each
    element, where it is (an index into ``levels``), and the clipped interval [low, high]."""
    t = levels.size(1)
    top_level = levels[:, -1:]
    # M_i = min(L_{i+1}, ..., L_{t-1}): the lowest level a later pop reached.
    later_min, flipped_at = levels[:, 1:].flip(1).cummin(dim=1)
    later_min, later_at = later_min.flip(1), (t - 1) - flipped_at.flip(1)
    below = levels[:, :-1]
    low = torch.minimum(below, later_min)
    high = torch.minimum(below + 1, later_min)  # <= top_level, since later_min is
    weights = torch.relu(high - torch.maximum(low, top_level - 1))
    return weights, later_min, later_at, low


class _SecondUnitRead(torch.autograd.Function):
    """The second unit of the soft stack after step t - 1: sum_i w_i V[i] over elements
    0..t-2, with weights from the levels (:func:`second_unit_weights`).

    Only the elements of nonzero weight are read: a few per sentence however long the stack,
    so a step costs O(t) scalar operations for the weights and O(D) per element read, not
    O(t * D). This is exact, derivatives included: a weight of 0 is a ReLU at or below 0, whose
    derivative is 0. Saves nothing for backward: the backward recomputes the weights from the
    levels and reads the values, both from their write-once tapes, which still hold what the
    forward read.

    ``levels``: a (B * T, 1) tape, row b * T + s = L_s of sentence b; ``values``: the thin
    stack's tape, element i of sentence b at row ``first_rows[b] + i``. ``dense``: read every
    element, weights of 0 included (O(t * D) a sentence, the same values): shapes that do not
    depend on the weights, nothing read back to the host, as static shapes need.
    """

    @staticmethod
    def forward(ctx, values, levels, value_token, level_token, first_rows, t, dense):
        # Both tapes' tokens are inputs, so this backward runs before the backward of any
        # write that came earlier (when the rows' gradients are complete).
        ctx.values, ctx.levels, ctx.t, ctx.dense = values, levels, t, dense
        ctx.save_for_backward(first_rows)
        weights = second_unit_weights(_levels_so_far(levels.data, first_rows.size(0), t))
        if dense:
            read = _elements(values.data, first_rows, t)
            return torch.bmm(weights.unsqueeze(1), read).squeeze(1)
        sentence, element = weights.nonzero(as_tuple=True)
        read = values.data.index_select(0, first_rows[sentence] + element)
        out = values.data.new_zeros(first_rows.size(0), values.data.size(1))
        # Shape: (B, width)
        return out.index_add_(0, sentence, weights[sentence, element].unsqueeze(1) * read)

    @staticmethod
    def backward(ctx, grad_out):
        (first_rows,) = ctx.saved_tensors
        batch_size, t = first_rows.size(0), ctx.t
        levels = _levels_so_far(ctx.levels.data, batch_size, t)
        weights, later_min, later_at, low = _second_unit(levels)
        if ctx.dense:
            return _dense_backward(
                ctx, grad_out, first_rows, levels, weights, later_min, later_at, low
            )
        sentence, element = weights.nonzero(as_tuple=True)
        rows = first_rows[sentence] + element
        grad_out = grad_out.to(ctx.values.data.dtype)
        grad_rows = grad_out.index_select(0, sentence)
        # d out / d V[i] = w_i grad_out.
        weight = weights[sentence, element].unsqueeze(1)
        ctx.values.grad_table().index_put_((rows,), weight * grad_rows, accumulate=True)
        # d out / d w_i = <grad_out, V[i]>, and w_i = high_i - max(low_i, L_{t-1} - 1) where
        # it is not 0: high_i is L_i + 1 or M_i, low_i is L_i or M_i, M_i is L at later_at.
        grad_weight = (grad_rows * ctx.values.data[rows]).sum(dim=1)
        below = levels[sentence, element]
        minimum = later_min[sentence, element]
        minimum_at = later_at[sentence, element]
        high_at = torch.where(below + 1 < minimum, element, minimum_at)
        low_at = torch.where(below < minimum, element, minimum_at)
        subtracted_at = torch.where(
            low[sentence, element] > levels[sentence, t - 1] - 1, low_at, t - 1
        )
        level_rows = sentence * ctx.levels.data.size(0) // batch_size
        level_grads = ctx.levels.grad_table()
        level_grads.index_put_(
            (torch.cat([level_rows + high_at, level_rows + subtracted_at]),),
            torch.cat([grad_weight, -grad_weight]).unsqueeze(1),
            accumulate=True,
        )
        empty = grad_out.new_zeros(0)
        return None, None, empty, empty, None, None, None


def _elements(values: torch.Tensor, first_rows: torch.Tensor, t: int) -> torch.Tensor:
    """Shape (B, t - 1, width): elements 0..t-2 of every sentence, read from the tape."""
    rows = first_rows.unsqueeze(1) + torch.arange(t - 1, device=first_rows.device)
    return values.index_select(0, rows.flatten()).view(first_rows.size(0), t - 1, -1)


def _dense_backward(ctx, grad_out, first_rows, levels, weights, later_min, later_at, low):
    """:class:`_SecondUnitRead`'s backward over every element (``dense``): the sparse one's
    formulas, with the terms of the elements of weight 0 present and multiplied by 0."""
    batch_size, t = first_rows.size(0), ctx.t
    grad_out = grad_out.to(ctx.values.data.dtype)
    rows = first_rows.unsqueeze(1) + torch.arange(t - 1, device=first_rows.device)
    # d out / d V[i] = w_i grad_out.
    grad_values = weights.unsqueeze(2) * grad_out.unsqueeze(1)
    ctx.values.grad_table().index_put_(
        (rows.flatten(),), grad_values.flatten(0, 1), accumulate=True
    )
    # d out / d w_i = <grad_out, V[i]> where w_i > 0 (0 where the ReLU is at or below 0).
    read = _elements(ctx.values.data, first_rows, t)
    grad_weight = torch.bmm(read, grad_out.unsqueeze(2)).squeeze(2)
    grad_weight = torch.where(weights > 0, grad_weight, 0)
    element = torch.arange(t - 1, device=first_rows.device).expand(batch_size, -1)
    below = levels[:, :-1]
    high_at = torch.where(below + 1 < later_min, element, later_at)
    low_at = torch.where(below < later_min, element, later_at)
    subtracted_at = torch.where(low > levels[:, -1:] - 1, low_at, t - 1)
    level_rows = (
        torch.arange(batch_size, device=first_rows.device) * (ctx.levels.data.size(0) // batch_size)
    ).unsqueeze(1)
    ctx.levels.grad_table().index_put_(
        (torch.cat([level_rows + high_at, level_rows + subtracted_at]).flatten(),),
        torch.cat([grad_weight, -grad_weight]).flatten().unsqueeze(1),
        accumulate=True,
    )
    empty = grad_out.new_zeros(0)
    return None, None, empty, empty, None, None, None


def _levels_so_far(levels: torch.Tensor, batch_size: int, t: int) -> torch.Tensor:
    """Shape (B, t): L_0..L_{t-1} of each sentence, a view of the levels tape."""
    return levels.view(batch_size, -1)[:, :t]


def run_soft_stack(
    batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy
) -> SpinnOutput:
    """SPINN with a soft stack and buffer, the strengths of REDUCE given by ``policy`` at each
    step (:class:`SoftStrengths`: the parser's probabilities, or the one-hot values of given
    transitions, the soft stack driven by given trees, which equals the thin stack; the
    parser still runs and its logits are returned). With typed REDUCE the composition's type
    input is the expected type embedding under the type classifier's probabilities.
    """
    # A parser, and with typed REDUCE a type classifier: checked with the policy
    # (rules.check_policy).
    tracker = parts.tracker
    assert tracker is not None and tracker.transition_classifier is not None
    assert (parts.type_embedding is None) == (parts.type_classifier is None)
    lengths, num_steps = batch.lengths, batch.num_steps
    # Given transitions are one tree per sentence (``check_batch`` with ``full_trees``).
    transitions = batch.transitions
    dense = parts.uses_static_shapes(batch.device)
    inputs, device = batch.inputs, batch.device
    batch_size, max_tokens, total_steps = batch.batch_size, batch.max_tokens, batch.total_steps
    compose, type_embedding, type_classifier = (
        parts.compose,
        parts.type_embedding,
        parts.type_classifier,
    )
    base = batch.base  # each sentence's zero row; its buffer and elements follow
    values = batch.tape
    levels = WriteOnceTape(batch_size * total_steps, 1, like=inputs)
    first_element = base + 1 + max_tokens
    first_level = torch.arange(batch_size, device=device) * total_steps
    hidden = compose.hidden
    zeros = inputs.new_zeros(batch_size)
    float_lengths = lengths.to(inputs.dtype)

    height = zeros  # H: total strength on the stack
    level = zeros  # L of the last element pushed
    consumed = zeros  # c: strength shifted off the buffer
    tracker_state = tracker.initial_state(batch_size, inputs)
    # The discrete tree the soft pass prefers, on a discrete stack run alongside.
    depth = torch.zeros_like(lengths)
    shifted = torch.zeros_like(lengths)
    preferred: List[torch.Tensor] = []
    all_logits: List[torch.Tensor] = []
    all_reduce: List[torch.Tensor] = []
    all_type_logits: List[torch.Tensor] = []

    for t in range(total_steps):
        active = t < num_steps
        # The buffer's first unit: words floor(c) and floor(c) + 1, linearly interpolated.
        word = consumed.detach().floor().long().clamp(max=max_tokens)
        fraction = (consumed - word.to(consumed.dtype)).unsqueeze(1)
        word_row = torch.where(word < lengths, buffer_rows_at(base, word), base)
        next_row = torch.where(word + 1 < lengths, buffer_rows_at(base, word + 1), base)
        top_row = first_element + t - 1 if t else base
        read = values.read(torch.cat([word_row, next_row, top_row]))
        word_node, next_node, top = read.split(batch_size)
        buffer_top = (1 - fraction) * word_node + fraction * next_node
        if t >= 2:
            second = _SecondUnitRead.apply(
                values.table, levels.table, values.token, levels.token, first_element, t, dense
            )
        else:
            second = torch.zeros_like(top)

        view = parts.parser_view
        tracker_state, logits = tracker(
            view(hidden(buffer_top)), view(hidden(top)), view(hidden(second)), tracker_state
        )
        all_logits.append(logits)
        type_logits = None if type_classifier is None else type_classifier(tracker_state[0])
        step = Step(
            t,
            logits,
            type_logits,
            given=None if transitions is None else transitions[:, t],
            given_types=None,
        )
        reduce_raw = policy.reduce_strength(step)
        # Legal moves: no word left -> REDUCE; fewer than two units on the stack -> SHIFT.
        has_word = unit_clamp(float_lengths - consumed)
        two_items = unit_clamp(height - 1)
        reduce = (1 - (1 - reduce_raw) * has_word) * two_items
        shift = 1 - reduce
        all_reduce.append(torch.where(active, reduce, 0))

        type_vector = None
        if type_logits is not None and type_embedding is not None:
            all_type_logits.append(type_logits)
            # The expected type embedding under the classifier's probabilities.
            type_vector = torch.softmax(type_logits, dim=-1) @ type_embedding.weight
        composed = compose(second, top, parts.extra_input(tracker_state[0], None, type_vector))
        pushed = shift.unsqueeze(1) * buffer_top + reduce.unsqueeze(1) * composed
        new_level = torch.relu(height - 2 * reduce)
        # After the sentence's end, push a copy of the top at its level: nothing changes.
        pushed = torch.where(active.unsqueeze(1), pushed, top)
        new_level = torch.where(active, new_level, level)
        values.write(first_element + t, pushed)
        levels.write(first_level + t, new_level.unsqueeze(1))
        level = new_level
        height = torch.where(active, new_level + 1, height)
        consumed = torch.where(active, consumed + shift, consumed)

        choice = torch.where(reduce > 0.5, REDUCE, SHIFT)
        choice = impose_forced(choice, depth < 2, shifted >= lengths)
        choice = torch.where(active, choice, PAD)
        depth = depth + (choice == SHIFT).long() - (choice == REDUCE).long()
        shifted = shifted + (choice == SHIFT).long()
        preferred.append(choice)

    last = values.read(first_element + total_steps - 1)
    output = SpinnOutput(
        sentence=hidden(last),
        transitions=torch.stack(preferred, dim=1),
        transition_logits=torch.stack(all_logits, dim=1),
        mode=policy.mode,
    )
    output.reduce_strengths = torch.stack(all_reduce, dim=1)
    if all_type_logits:
        output.reduce_type_logits = torch.stack(all_type_logits, dim=1)
        preferred_types = output.reduce_type_logits.argmax(dim=-1)
        output.reduce_types = torch.where(output.transitions == REDUCE, preferred_types, PAD)
    if batch.return_nodes:
        element_rows = first_element.unsqueeze(1) + torch.arange(total_steps, device=device)
        nodes = values.read(element_rows.flatten())
        output.node_states = nodes.view(batch_size, total_steps, compose.node_dim)
        output.node_hidden = hidden(output.node_states)
    return output


def buffer_rows_at(base: torch.Tensor, word: torch.Tensor) -> torch.Tensor:
    """Values-tape row of word ``word`` of each sentence."""
    return base + 1 + word
