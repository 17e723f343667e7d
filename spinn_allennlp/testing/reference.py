"""Reference implementations the batched core is checked against (and benchmarked with)."""

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import torch

from spinn_allennlp.core.cells import TreeLSTMComposition
from spinn_allennlp.core.spinn import Spinn
from spinn_allennlp.core.transitions import REDUCE, SHIFT, Tree


def recursive_tree_lstm(model: Spinn, words: torch.Tensor, tree: Tree) -> torch.Tensor:
    """The conventional TreeLSTM: one sentence, one node at a time, recursively, with eq. 1-4
    written out directly from ``model``'s own parameters (SPINN-PI-NT, no dropout or batch
    norm). ``words``: (n, input_dim) vectors of the sentence's words; leaves of ``tree`` are
    ``str(word index)``. Returns h of the root, shape (hidden_dim,)."""
    if not isinstance(model.compose, TreeLSTMComposition) or model.tracker is not None:
        raise ValueError("the recursive reference is the TreeLSTM without tracking")
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


def reference_spinn(
    model: Spinn, words: torch.Tensor, transitions: Optional[Sequence[int]] = None
) -> ReferenceParse:
    """Algorithm 1 for one sentence with Python lists for the stack and the buffer, one step
    and one node at a time, with ``model``'s own layers (any variant: tracking, parser,
    composition). ``words``: (n, input_dim), n >= 1. Follows ``transitions`` when given (no
    PAD), else the parser's argmax restricted to legal moves (SHIFT below two stack items,
    REDUCE once the buffer is empty): the batched loop of ``Spinn.forward`` in "given" and
    "predicted" mode, written without any of its batching."""
    n = words.size(0)
    hidden = model.compose.hidden
    buffer = list(model.projection(words.unsqueeze(0), torch.ones(1, n, dtype=torch.bool)))
    zero = words.new_zeros(model.node_dim)
    stack: List[torch.Tensor] = []
    state = model.tracker.initial_state(1, words) if model.tracker is not None else None
    followed: List[int] = []
    logits_per_step: List[torch.Tensor] = []
    pushed: List[torch.Tensor] = []
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
            state, logits = model.tracker(*(hidden(f).unsqueeze(0) for f in features), state)
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
        else:
            right, left = stack.pop(), stack.pop()
            stack.append(model.compose(left.unsqueeze(0), right.unsqueeze(0), extra)[0])
        followed.append(action)
        pushed.append(stack[-1])
    return ReferenceParse(
        sentence=hidden(stack[-1]),
        transitions=followed,
        transition_logits=torch.stack(logits_per_step) if logits_per_step else None,
        node_states=torch.stack(pushed),
    )
