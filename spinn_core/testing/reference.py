"""Reference implementations the batched core is checked against (and benchmarked with)."""

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import torch

from spinn_core.child_sum import ROOT, ChildSumTreeLSTM
from spinn_core.compositions import TreeLSTMComposition
from spinn_core.runners.soft_stack import unit_clamp
from spinn_core.spinn import Spinn
from spinn_core.transitions import REDUCE, SHIFT, Tree


def recursive_tree_lstm(model: Spinn, words: torch.Tensor, tree: Tree) -> torch.Tensor:
    """The conventional TreeLSTM: one sentence, one node at a time, recursively, with eq. 1-4
    written out directly from ``model``'s own parameters (SPINN-PI-NT, no dropout or batch
    norm). ``words``: (n, input_dim) vectors of the sentence's words; leaves of ``tree`` are
    ``str(word index)``. Returns h of the root, shape (hidden_dim,)."""
    if not isinstance(model.compose, TreeLSTMComposition) or model.tracker is not None:
        raise ValueError("the recursive reference is the TreeLSTM without tracking")
    if model.projection is None or model.node_input_dim:
        raise ValueError("this reference has projected leaves and no node inputs")
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


@dataclass
class ReferenceParse:
    """What :func:`reference_spinn` computes for one sentence of n words (T = 2n - 1 steps)."""

    sentence: torch.Tensor  # (hidden_dim,) h of the stack top after the last step
    transitions: List[int]  # the T transitions followed
    transition_logits: Optional[torch.Tensor]  # (T, 2) with a parser
    node_states: torch.Tensor  # (T, node_dim): the node pushed at each step
    reduce_types: Optional[List[int]] = None  # typed REDUCE: each step's type (-1 at SHIFTs)


def reference_spinn(
    model: Spinn,
    words: torch.Tensor,
    transitions: Optional[Sequence[int]] = None,
    reduce_types: Optional[Sequence[int]] = None,
) -> ReferenceParse:
    """Algorithm 1 for one sentence with Python lists for the stack and the buffer, one step
    and one node at a time, with ``model``'s own layers (any variant: tracking, parser,
    composition). ``words``: (n, input_dim), n >= 1. Follows ``transitions`` when given (no
    PAD), else the parser's argmax restricted to legal moves (SHIFT below two stack items,
    REDUCE once the buffer is empty): the batched loop of ``Spinn.forward`` in "given" and
    "predicted" mode, written without any of its batching. With typed REDUCE, each REDUCE's
    type is ``reduce_types[t]`` when given, else the type classifier's argmax, and its
    embedding joins the composition's extra input."""
    n = words.size(0)
    hidden = model.compose.hidden
    buffer = list(model.leaves(words.unsqueeze(0), torch.ones(1, n, dtype=torch.bool)))
    zero = words.new_zeros(model.node_dim)
    stack: List[torch.Tensor] = []
    # With summaries (NSHRDLU 3.1): each stack item's stack-LSTM state, and the buffer LSTM's
    # h over words j..n-1 for each j (run last word first), zeros for an empty buffer.
    stack_summaries: List[torch.Tensor] = []
    buffer_summaries: List[torch.Tensor] = []
    if model.summaries is not None:
        size = model.summaries.summary_dim
        backwards = torch.stack([hidden(node) for node in reversed(buffer)]).unsqueeze(0)
        states = model.summaries.buffer(backwards)[0][0]
        buffer_summaries = [states[n - 1 - j] for j in range(n)] + [words.new_zeros(size)]
    state = model.tracker.initial_state(1, words) if model.tracker is not None else None
    followed: List[int] = []
    logits_per_step: List[torch.Tensor] = []
    pushed: List[torch.Tensor] = []
    types_followed: List[int] = []
    position = 0
    for t in range(2 * n - 1 if transitions is None else len(transitions)):
        extra = None
        if model.tracker is not None:
            assert state is not None
            features = [
                buffer[position] if position < n else zero,
                stack[-1] if stack else zero,
                stack[-2] if len(stack) > 1 else zero,
            ]
            summaries = None
            if model.summaries is not None:
                empty = words.new_zeros(2 * model.summaries.summary_dim)
                top_summary = stack_summaries[-1] if stack_summaries else empty
                summaries = torch.cat(
                    [top_summary[: model.summaries.summary_dim], buffer_summaries[position]]
                ).unsqueeze(0)
            state, logits = model.tracker(
                *(hidden(f).unsqueeze(0) for f in features), state, summaries
            )
            extra = state[0]
            if logits is not None:
                logits_per_step.append(logits[0])
        if transitions is not None:
            action = transitions[t]
        elif len(stack) < 2:
            action = SHIFT
        elif position == n:
            action = REDUCE
        else:
            action = int(logits_per_step[-1].argmax())
        if action == SHIFT:
            stack.append(buffer[position])
            position += 1
            types_followed.append(-1)
        else:
            right, left = stack.pop(), stack.pop()
            if model.summaries is not None:
                stack_summaries = stack_summaries[:-2]
            if model.type_embedding is not None:
                assert extra is not None
                if reduce_types is not None:
                    kind = int(reduce_types[t])
                else:
                    assert model.type_classifier is not None
                    kind = int(model.type_classifier(extra)[0].argmax())
                types_followed.append(kind)
                extra = torch.cat([extra, model.type_embedding.weight[kind].unsqueeze(0)], dim=-1)
            stack.append(model.compose(left.unsqueeze(0), right.unsqueeze(0), extra)[0])
        if model.summaries is not None:
            below = (
                stack_summaries[-1]
                if stack_summaries
                else words.new_zeros(2 * model.summaries.summary_dim)
            )
            stack_summaries.append(
                model.summaries.push(hidden(stack[-1]).unsqueeze(0), below.unsqueeze(0))[0]
            )
        followed.append(action)
        pushed.append(stack[-1])
    return ReferenceParse(
        sentence=hidden(stack[-1]),
        transitions=followed,
        transition_logits=torch.stack(logits_per_step) if logits_per_step else None,
        node_states=torch.stack(pushed),
        reduce_types=types_followed if model.type_embedding is not None else None,
    )


def recursive_tree_lstm_nodes(
    model: Spinn, words: torch.Tensor, tree: Tree, node_inputs: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """Every node of one sentence, one node at a time, with node inputs (Chen et al. 2017,
    eq. 3-10, written out from ``model``'s parameters: SPINN-PI-NT's TreeLSTM, no dropout or
    batch norm). ``words``: (n, input_dim); leaves of ``tree`` are ``str(word index)``;
    ``node_inputs``: (2n - 1, node_input_dim), row k the input of the k-th node in post-order
    (leaves' rows unused: a leaf's input is its word), when the model takes node inputs.
    A leaf is eq. 4's projection of its word or, with ``leaf="cell"``, the cell with zero
    children and the word as input. Returns the ``[h; c]`` of every node in post-order,
    shape (2n - 1, 2 * hidden_dim)."""
    if not isinstance(model.compose, TreeLSTMComposition) or model.tracker is not None:
        raise ValueError("the recursive reference is the TreeLSTM without tracking")
    if (node_inputs is None) != (model.node_input_dim == 0):
        raise ValueError("node_inputs must be given exactly when the model takes them")
    D = model.hidden_dim
    W, b = model.compose.linear.weight, model.compose.linear.bias
    # Columns of W: left child's h, right child's h, the node's input x.
    U_left, U_right, W_x = W[:, :D], W[:, D : 2 * D], W[:, 2 * D :]
    nodes: List[torch.Tensor] = []

    def cell(h_l, c_l, h_r, c_r, x) -> Tuple[torch.Tensor, torch.Tensor]:
        z = U_left @ h_l + U_right @ h_r + b
        if x is not None:
            z = z + W_x @ x
        i, f_l, f_r, o, u = z.split(D)
        c = torch.sigmoid(f_l) * c_l + torch.sigmoid(f_r) * c_r + torch.sigmoid(i) * torch.tanh(u)
        return torch.sigmoid(o) * torch.tanh(c), c

    def node(subtree: Tree) -> Tuple[torch.Tensor, torch.Tensor]:
        if isinstance(subtree, str):
            word = words[int(subtree)]
            if model.projection is not None:
                h, c = model.projection.linear(word).split(D)
            else:
                zero = word.new_zeros(D)
                h, c = cell(zero, zero, zero, zero, word)
        else:
            (h_l, c_l), (h_r, c_r) = node(subtree[0]), node(subtree[1])
            x = None if node_inputs is None else node_inputs[len(nodes)]
            h, c = cell(h_l, c_l, h_r, c_r, x)
        nodes.append(torch.cat([h, c]))
        return h, c

    node(tree)
    return torch.stack(nodes)


def recursive_child_sum(
    model: ChildSumTreeLSTM, words: torch.Tensor, heads: Sequence[int]
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The Child-Sum Tree-LSTM of Tai et al. (2015, eq. 2-8) on one sentence, one node at a time,
    recursively from the root, written out from ``model``'s own parameters. ``words``:
    (n, input_dim); ``heads``: each word's head position, ROOT (-1) for the root. Returns
    (h of the root, (n, D) h of every word's node)."""
    D = model.hidden_dim
    W, b = model.input_linear.weight, model.input_linear.bias
    W_i, W_o, W_u, W_f = W.split(D)
    b_i, b_o, b_u, b_f = b.split(D)
    U_i, U_o, U_u = model.child_iou.weight.split(D)
    U_f = model.child_forget.weight
    dependents: List[List[int]] = [[] for _ in heads]
    for word, head in enumerate(heads):
        if head != ROOT:
            dependents[head].append(word)
    hidden: List[torch.Tensor] = [words.new_zeros(D)] * len(heads)

    def node(j: int) -> Tuple[torch.Tensor, torch.Tensor]:
        x = words[j]
        states = [node(k) for k in dependents[j]]
        h_sum = sum((h for h, _ in states), x.new_zeros(D))
        i = torch.sigmoid(W_i @ x + U_i @ h_sum + b_i)
        o = torch.sigmoid(W_o @ x + U_o @ h_sum + b_o)
        u = torch.tanh(W_u @ x + U_u @ h_sum + b_u)
        c = i * u
        for h_k, c_k in states:
            c = c + torch.sigmoid(W_f @ x + U_f @ h_k + b_f) * c_k
        h = o * torch.tanh(c)
        hidden[j] = h
        return h, c

    root = list(heads).index(ROOT)
    h_root, _ = node(root)
    return h_root, torch.stack(hidden)


# --- the soft stack, written from Grefenstette et al. (2015) ------------------------------


def neural_stack_update(
    strengths: List[torch.Tensor], pop: torch.Tensor, push: torch.Tensor
) -> List[torch.Tensor]:
    """Grefenstette et al. 2015, eq. 2: remove ``pop`` units of strength from the top down,
    then push a new element of strength ``push``. ``strengths``: bottom first."""
    updated = []
    for i, strength in enumerate(strengths):
        above = sum(strengths[i + 1 :], torch.zeros_like(pop))
        updated.append(torch.relu(strength - torch.relu(pop - above)))
    return updated + [push]


def neural_stack_read(
    strengths: List[torch.Tensor], values: List[torch.Tensor], start: float, end: float
) -> torch.Tensor:
    """The strength-weighted sum of the values lying between ``start`` and ``end`` units below
    the top (eq. 3 reads [0, 1]; [1, 2] is the second unit)."""
    total = torch.zeros_like(values[0]) if values else torch.zeros(0)
    for i, (strength, value) in enumerate(zip(strengths, values)):
        above = sum(strengths[i + 1 :], torch.zeros_like(strength))
        overlap = torch.relu(
            torch.minimum(above + strength, above.new_tensor(end)) - torch.clamp(above, min=start)
        )
        total = total + overlap * value
    return total


def reference_soft_spinn(
    model: Spinn, words: torch.Tensor, reduce_given: Optional[Sequence[int]] = None
) -> torch.Tensor:
    """SPINN on a continuous stack and queue, one sentence, element by element, with the
    strength equations of Grefenstette et al. (2015) and none of the batched implementation's
    shortcuts (levels, pointers, the sparse read): each step reads the buffer's first unit, the
    stack's top two units, runs the tracker and the composition, pops ``2 p(REDUCE)``, pushes
    the mixture ``p(SHIFT) buffer_top + p(REDUCE) COMPOSE(second, top)`` with strength 1 and
    removes ``p(SHIFT)`` from the buffer, with the legal-move rule of ``soft_stack.py``.
    ``words``: (n, input_dim); ``reduce_given``: one-hot strengths instead of the parser's.
    Returns h of the stack's top unit after 2n - 1 steps, shape (hidden_dim,)."""
    tracker = model.tracker
    if tracker is None or tracker.transition_classifier is None:
        raise ValueError("the soft stack needs a parser")
    n = words.size(0)
    buffer = list(model.leaves(words.unsqueeze(0), torch.ones(1, n, dtype=torch.bool)))
    hidden = model.compose.hidden
    zero = words.new_zeros(())
    strengths: List[torch.Tensor] = []
    values: List[torch.Tensor] = []
    consumed = zero
    state = tracker.initial_state(1, words)
    for t in range(2 * n - 1):
        # The queue's first unit: word j occupies [j, j + 1] of the strength shifted off.
        buffer_top = sum(
            torch.relu(
                torch.minimum(consumed + 1, zero + j + 1) - torch.maximum(consumed, zero + j)
            )
            * word
            for j, word in enumerate(buffer)
        )
        top = (
            neural_stack_read(strengths, values, 0.0, 1.0)
            if values
            else torch.zeros_like(buffer[0])
        )
        second = (
            neural_stack_read(strengths, values, 1.0, 2.0)
            if values
            else torch.zeros_like(buffer[0])
        )
        state, logits = tracker(
            hidden(buffer_top).unsqueeze(0),
            hidden(top).unsqueeze(0),
            hidden(second).unsqueeze(0),
            state,
        )
        if reduce_given is None:
            reduce_raw = torch.softmax(logits[0], dim=-1)[1]
        else:
            reduce_raw = zero + float(reduce_given[t])
        height = sum(strengths, zero)
        has_word = unit_clamp(n - consumed)
        reduce = (1 - (1 - reduce_raw) * has_word) * unit_clamp(height - 1)
        composed = model.compose(second.unsqueeze(0), top.unsqueeze(0), state[0])[0]
        pushed = (1 - reduce) * buffer_top + reduce * composed
        strengths = neural_stack_update(strengths, 2 * reduce, zero + 1)
        values.append(pushed)
        consumed = consumed + (1 - reduce)
    return hidden(neural_stack_read(strengths, values, 0.0, 1.0))
