"""The neural layers SPINN is made of (paper §3.2-3.4): buffer projection, composition
functions, tracking LSTM and transition classifier. Each works on a batch of rows."""

from typing import Dict, Optional, Tuple, Type

import torch
from torch import nn


class BufferProjection(nn.Module):
    """Eq. 4: a learned linear map from (frozen) word vectors to the buffer's node states.

    ``node_dim`` is 2D for the TreeLSTM (h and c) and D for the TreeRNN (h only). Dropout and,
    optionally, batch normalisation follow the projection as in §4.1. Only real tokens are
    projected (padding is a third of a typical batch, and must not reach batch-norm
    statistics): the result is their ``(num_real_tokens, node_dim)`` rows, in ``mask`` order.
    """

    def __init__(
        self, input_dim: int, node_dim: int, dropout: float = 0.0, batch_norm: bool = False
    ) -> None:
        super().__init__()
        # Batch norm's shift makes a bias before it redundant.
        self.linear = nn.Linear(input_dim, node_dim, bias=not batch_norm)
        self.batch_norm = nn.BatchNorm1d(node_dim) if batch_norm else None
        self.dropout = nn.Dropout(dropout)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        projected = self.linear(inputs[mask.bool()])
        if self.batch_norm is not None:
            projected = self.batch_norm(projected)
        return self.dropout(projected)


class Composition(nn.Module):
    """What the thin stack needs of a composition function: ``forward(left, right, extra)``
    maps two children's node rows (and an optional extra input per row, e.g. the tracker's
    state) to the parent's node row, and ``hidden(nodes)`` reads h out of node rows.

    ``hidden_dim`` is D; ``node_dim`` the width of a node row (2D for [h; c], D for h only);
    ``extra_dim`` the width of the extra input (0 for none)."""

    hidden_dim: int
    node_dim: int
    extra_dim: int

    def forward(
        self, left: torch.Tensor, right: torch.Tensor, extra: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        raise NotImplementedError

    def leaf(self, extra: torch.Tensor) -> torch.Tensor:
        """``forward(zeros, zeros, extra)``, a node with no children, without the products of
        the zero children: rows of ``extra`` (width ``extra_dim``) to node rows."""
        raise NotImplementedError

    @staticmethod
    def hidden(nodes: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class TreeLSTMComposition(Composition):
    """Eq. 1-3: binary TreeLSTM with separate forget gates for the two children and an optional
    extra input ``e`` (the tracking LSTM's state). Nodes are ``[h; c]`` rows of width 2D."""

    def __init__(self, hidden_dim: int, extra_dim: int = 0) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.extra_dim = extra_dim
        self.node_dim = 2 * hidden_dim
        self.linear = nn.Linear(2 * hidden_dim + extra_dim, 5 * hidden_dim)

    def forward(
        self, left: torch.Tensor, right: torch.Tensor, extra: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        h_left, c_left = left.chunk(2, dim=-1)
        h_right, c_right = right.chunk(2, dim=-1)
        features = [h_left, h_right] if extra is None else [h_left, h_right, extra]
        gates = self.linear(torch.cat(features, dim=-1))
        # One sigmoid over the four gates (i, f_l, f_r, o) rather than four calls.
        sigmoid_gates, g = gates.split([4 * self.hidden_dim, self.hidden_dim], dim=-1)
        i, f_left, f_right, o = torch.sigmoid(sigmoid_gates).chunk(4, dim=-1)
        c = f_left * c_left + f_right * c_right + i * torch.tanh(g)
        h = o * torch.tanh(c)
        return torch.cat([h, c], dim=-1)

    def leaf(self, extra: torch.Tensor) -> torch.Tensor:
        # Children's h and c are zero: only the extra input's columns and the bias remain, and
        # the forget gates multiply zeros (eq. 1-3; Tai et al.'s leaf).
        gates = nn.functional.linear(
            extra, self.linear.weight[:, 2 * self.hidden_dim :], self.linear.bias
        )
        sigmoid_gates, g = gates.split([4 * self.hidden_dim, self.hidden_dim], dim=-1)
        i, _, _, o = torch.sigmoid(sigmoid_gates).chunk(4, dim=-1)
        c = i * torch.tanh(g)
        h = o * torch.tanh(c)
        return torch.cat([h, c], dim=-1)

    @staticmethod
    def hidden(nodes: torch.Tensor) -> torch.Tensor:
        return nodes[..., : nodes.size(-1) // 2]


class TreeRNNComposition(Composition):
    """The plain TreeRNN of the SPINN blog post: p = tanh(W [c1; c2; e] + b). Nodes are h only."""

    def __init__(self, hidden_dim: int, extra_dim: int = 0) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.extra_dim = extra_dim
        self.node_dim = hidden_dim
        self.linear = nn.Linear(2 * hidden_dim + extra_dim, hidden_dim)

    def forward(
        self, left: torch.Tensor, right: torch.Tensor, extra: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        features = [left, right] if extra is None else [left, right, extra]
        return torch.tanh(self.linear(torch.cat(features, dim=-1)))

    def leaf(self, extra: torch.Tensor) -> torch.Tensor:
        weight = self.linear.weight[:, 2 * self.hidden_dim :]
        return torch.tanh(nn.functional.linear(extra, weight, self.linear.bias))

    @staticmethod
    def hidden(nodes: torch.Tensor) -> torch.Tensor:
        return nodes


COMPOSITIONS: Dict[str, Type[Composition]] = {
    "treelstm": TreeLSTMComposition,
    "treernn": TreeRNNComposition,
}


class Tracker(nn.Module):
    """§3.3: an LSTM run alongside the parser over (buffer top, stack top, stack second), whose
    state feeds the composition and, with a parser, the transition classifier (eq. 5).
    ``summary_dim`` > 0 adds two more inputs of that size (NSHRDLU §3.1: summaries of the whole
    stack and buffer, see :class:`Summaries`)."""

    def __init__(
        self,
        hidden_dim: int,
        tracking_dim: int,
        predict_transitions: bool,
        summary_dim: int = 0,
    ) -> None:
        super().__init__()
        self.tracking_dim = tracking_dim
        self.cell = nn.LSTMCell(3 * hidden_dim + 2 * summary_dim, tracking_dim)
        self.transition_classifier = nn.Linear(tracking_dim, 2) if predict_transitions else None

    def initial_state(
        self, batch_size: int, like: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        zeros = like.new_zeros(batch_size, self.tracking_dim)
        return zeros, zeros

    def forward(
        self,
        buffer_top: torch.Tensor,
        stack_top: torch.Tensor,
        stack_second: torch.Tensor,
        state: Tuple[torch.Tensor, torch.Tensor],
        summaries: Optional[torch.Tensor] = None,
    ):
        features = [buffer_top, stack_top, stack_second]
        if summaries is not None:
            features.append(summaries)
        h, c = self.cell(torch.cat(features, dim=-1), state)
        logits = self.transition_classifier(h) if self.transition_classifier is not None else None
        return (h, c), logits


class Summaries(nn.Module):
    """NSHRDLU §3.1: LSTMs over the contents of the stack and of the buffer, for the tracker
    (as the stack LSTM of Dyer et al. 2015).

    * Stack: each item pushed gets the state of one LSTM step on its h from the state of the
      item below it, so the state stored with the top item summarises the whole stack, bottom
      to top; a pop returns to the state of the item below, at no cost.
    * Buffer: an LSTM run once over the words from the last to the first; its state at word j
      summarises the words j..N-1, what is left in the buffer after j SHIFTs.

    ``summary_dim`` is the size of each summary (h of its LSTM).
    """

    def __init__(self, hidden_dim: int, summary_dim: int) -> None:
        super().__init__()
        self.summary_dim = summary_dim
        self.stack = nn.LSTMCell(hidden_dim, summary_dim)
        self.buffer = nn.LSTM(hidden_dim, summary_dim, batch_first=True)

    def push(self, pushed: torch.Tensor, below: torch.Tensor) -> torch.Tensor:
        """The stack summary ``[h; c]`` (rows, 2 * summary_dim) after pushing items with h
        ``pushed`` onto stacks whose top item's summary is ``below``."""
        h, c = self.stack(pushed, below.chunk(2, dim=-1))
        return torch.cat([h, c], dim=-1)

    def remaining(self, words: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Shape (B, N + 1, summary_dim): h of the buffer LSTM over words j..n-1 of each
        sentence, zeros from j = n on (an empty buffer). ``words``: (B, N, hidden_dim) h of
        the words, ``lengths``: (B,)."""
        batch_size, max_tokens, _ = words.shape
        positions = torch.arange(max_tokens, device=words.device).unsqueeze(0)
        # Word n - 1 - j of each sentence at position j: the words last to first.
        backwards = (lengths.unsqueeze(1) - 1 - positions).clamp(min=0)
        reversed_words = words.gather(1, backwards.unsqueeze(-1).expand_as(words))
        packed = nn.utils.rnn.pack_padded_sequence(
            reversed_words, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False
        )
        states, _ = self.buffer(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(
            states, batch_first=True, total_length=max_tokens
        )
        # The state after reading words n-1..j sits at position n - 1 - j.
        summary = states.gather(1, backwards.unsqueeze(-1).expand(-1, -1, self.summary_dim))
        summary = summary * (positions < lengths.unsqueeze(1)).unsqueeze(-1)
        return torch.cat([summary, summary.new_zeros(batch_size, 1, self.summary_dim)], dim=1)
