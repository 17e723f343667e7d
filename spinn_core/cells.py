"""The layers SPINN is made of besides its composition (``compositions/``): the buffer's
projection (eq. 4, :class:`BufferProjection`), the tracking LSTM and its transition classifier
(§3.3 and eq. 5, :class:`Tracker`, with its loop form :class:`TrackerLoop`) and the stack and
buffer summaries it may read (:class:`Summaries`). Each works on a batch of rows."""

from typing import Optional, Tuple, Union

import torch
from torch import nn

from spinn_core.loop_linear import LoopLinear, loop_weights, token_grad
from spinn_core.tape import WriteOnceTape


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

    def forward(
        self, inputs: torch.Tensor, mask: torch.Tensor, dense: bool = False
    ) -> torch.Tensor:
        """``dense``: the rows of every position, (B * N, node_dim), padding positions read as
        zero vectors and left out of the batch statistics: the same values at real words, with
        shapes that depend on (B, N) alone (no boolean indexing, which reads the mask back to
        the host)."""
        if not dense:
            projected = self.linear(inputs[mask.bool()])
            if self.batch_norm is not None:
                projected = self.batch_norm(projected)
            return self.dropout(projected)
        real = mask.bool().flatten()
        words = torch.where(real.unsqueeze(1), inputs.flatten(0, 1), 0)
        projected = self.linear(words)
        if self.batch_norm is not None:
            projected = masked_batch_norm(self.batch_norm, projected, real)
        return self.dropout(projected)


def masked_batch_norm(norm: nn.BatchNorm1d, rows: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """``norm`` applied to ``rows`` (r, C) as if only the ``real`` ones (r,) bool were there:
    in training, statistics over the real rows (the running ones updated as ``nn.BatchNorm1d``
    updates them: biased variance to normalise, unbiased into the running average); in
    evaluation, the running statistics, as ``norm`` itself."""
    if not norm.training and norm.running_mean is not None:
        return nn.functional.batch_norm(
            rows, norm.running_mean, norm.running_var, norm.weight, norm.bias, False, 0.0, norm.eps
        )
    # Statistics in float32 at least, as nn.BatchNorm1d keeps them: in bf16 or fp16 (mixed
    # precision) `rows - mean` loses the spread when the mean is large beside it.
    low_precision = rows.dtype not in (torch.float32, torch.float64)
    out_dtype = rows.dtype
    if low_precision:
        rows = rows.float()
    weights = real.to(rows.dtype).unsqueeze(1)
    count = weights.sum()
    mean = (rows * weights).sum(dim=0) / count.clamp(min=1)
    centred = rows - mean
    variance = (centred.square() * weights).sum(dim=0) / count.clamp(min=1)
    if norm.running_mean is not None and norm.running_var is not None:
        with torch.no_grad():
            assert norm.num_batches_tracked is not None
            norm.num_batches_tracked.add_(1)
            factor: Union[float, torch.Tensor] = (
                # A cumulative average; a tensor, so that nothing is read back to the host.
                1.0 / norm.num_batches_tracked if norm.momentum is None else norm.momentum
            )
            factor = factor * (count > 0).to(rows.dtype)  # a batch without words: no change
            unbiased = variance * count / (count - 1).clamp(min=1)
            norm.running_mean.lerp_(mean.to(norm.running_mean.dtype), factor)
            norm.running_var.lerp_(unbiased.to(norm.running_var.dtype), factor)
    normalised = centred * torch.rsqrt(variance + norm.eps)
    if norm.weight is not None:
        normalised = normalised * norm.weight + norm.bias
    return normalised.to(out_dtype) if low_precision else normalised


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

    def loop(self, words: torch.Tensor, rows: Optional[int] = None) -> "TrackerLoop":
        """The tracker for one pass of a step loop over the words with h ``words``
        (num_words, D), ``rows`` steps of all sentences in all (when known): see
        :class:`TrackerLoop`. Call once per pass."""
        return TrackerLoop(self, words, rows)


class TrackerLoop:
    """The tracker (:class:`Tracker`, the same function) for the steps of one pass.

    The cell's input product splits by input: ``W [buffer top; stack top; stack second;
    summaries] = W_buffer buffer_top + W_rest [...]``. The buffer top is always a word (or the
    empty buffer), so ``W_buffer h + b`` is computed for every word at once, one large product
    before the first step, and each step reads its rows (a write-once tape of those rows, so
    their gradients add up in one table). The rest of the product, with the recurrent one
    (``W_hh h``), and the LSTM's gates run as one autograd function per step
    (:class:`_LSTMStep`) whose weight gradient is computed once for the pass
    (:class:`LoopLinear`). A step is called with the buffer top's word index (``empty`` for an
    empty buffer)."""

    def __init__(self, tracker: Tracker, words: torch.Tensor, rows: Optional[int] = None) -> None:
        cell = tracker.cell
        size = words.size(1)
        num_words = words.size(0)
        bias = cell.bias_ih + cell.bias_hh
        buffer_part = torch.addmm(bias, words, cell.weight_ih[:, :size].t())
        self.buffer = WriteOnceTape(num_words + 1, buffer_part.size(1), like=words)
        # The last row is the empty buffer's: the bias alone.
        self.buffer.write(
            torch.arange(num_words + 1, device=words.device),
            torch.cat([buffer_part, bias.unsqueeze(0).to(buffer_part.dtype)]),
        )
        self.empty = num_words
        # The other inputs' columns in the order a step lays them out: stack second, stack
        # top (as the stack holds them, bottom first), summaries, previous h.
        weight = torch.cat(
            [
                cell.weight_ih[:, 2 * size : 3 * size],
                cell.weight_ih[:, size : 2 * size],
                cell.weight_ih[:, 3 * size :],
                cell.weight_hh,
            ],
            dim=1,
        )
        self.linear, self.token = loop_weights(weight, rows=rows)

    def __call__(
        self,
        buffer_top: torch.Tensor,
        stack: torch.Tensor,
        state: Tuple[torch.Tensor, torch.Tensor],
        summaries: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """One step of k sentences: ``buffer_top`` (k,) word indices, ``stack`` (k, 2, D) h of
        the stack second and top, ``state`` (h, c), ``summaries`` (k, 2S) or None. Returns the
        new state (h, c); the parser's logits are the tracker's ``transition_classifier(h)``,
        left to the caller (who may score every step at once after the last)."""
        added = self.buffer.read(buffer_top)
        if self.token is None and not torch.is_grad_enabled():
            return _lstm_step(self.linear, added, state[1], stack, summaries, state[0])[:2]
        return _LSTMStep.apply(self.linear, self.token, added, state[1], stack, summaries, state[0])


def _lstm_step(linear: LoopLinear, added, c_prev, stack, summaries, h_prev):
    """One ``nn.LSTMCell`` step (gates i, f, g, o) of k rows whose input product is ``added``
    (k, 4T) plus the product of [stack (k, 2, D) flattened; summaries; h_prev]. Returns h, c
    and what the backward pass needs: the gates through sigmoid (g's columns unused), tanh(g),
    tanh(c) and the product's place."""
    rows, _, size = stack.shape
    pieces = [stack.view(rows, 2 * size)]
    if summaries is not None:
        pieces.append(summaries)
    pieces.append(h_prev)
    gates, place = linear.product(pieces, added)
    width = h_prev.size(1)
    tanh_g = torch.tanh(gates[:, 2 * width : 3 * width])
    acts = gates.sigmoid_()
    i, f, _, o = acts.view(rows, 4, width).unbind(1)
    c = f * c_prev
    c.addcmul_(i, tanh_g)
    tanh_c = torch.tanh(c)
    return o * tanh_c, c, acts, tanh_g, tanh_c, place


class _LSTMStep(torch.autograd.Function):
    """One LSTM cell step of k rows (:func:`_lstm_step`), its backward written out."""

    @staticmethod
    def forward(ctx, linear: LoopLinear, token, added, c_prev, stack, summaries, h_prev):
        h, c, acts, tanh_g, tanh_c, place = _lstm_step(
            linear, added, c_prev, stack, summaries, h_prev
        )
        ctx.linear, ctx.place = linear, place
        ctx.size = stack.size(2)
        ctx.summary_width = 0 if summaries is None else summaries.size(1)
        ctx.save_for_backward(acts, tanh_g, c_prev, tanh_c)
        return h, c

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        acts, tanh_g, c_prev, tanh_c = ctx.saved_tensors
        rows, width = c_prev.shape
        i, f, _, o = acts.view(rows, 4, width).unbind(1)
        grad_cell = torch.ops.aten.tanh_backward(grad_h * o, tanh_c).add_(grad_c)
        grads = ctx.linear.grad_rows(ctx.place, 4 * width, acts)
        parts = grads.view(rows, 4, width)
        torch.mul(grad_cell, tanh_g, out=parts[:, 0])
        torch.mul(grad_cell, c_prev, out=parts[:, 1])
        torch.mul(grad_cell, i, out=parts[:, 2])
        torch.mul(grad_h, tanh_c, out=parts[:, 3])
        # Sigmoid derivatives for i and f (adjacent) and o, tanh's for g.
        for start, stop in ((0, 2), (3, 4)):
            part = grads[:, start * width : stop * width]
            torch.ops.aten.sigmoid_backward.grad_input(
                part, acts[:, start * width : stop * width], grad_input=part
            )
        part = grads[:, 2 * width : 3 * width]
        torch.ops.aten.tanh_backward.grad_input(part, tanh_g, grad_input=part)
        grad_inputs = ctx.linear.input_grad(grads, ctx.place)
        size, summary_width = ctx.size, ctx.summary_width
        grad_stack = grad_inputs[:, : 2 * size].view(rows, 2, size)
        grad_summaries = (
            grad_inputs[:, 2 * size : 2 * size + summary_width] if summary_width else None
        )
        grad_h_prev = grad_inputs[:, 2 * size + summary_width :]
        return (
            None,
            token_grad(ctx, grads),
            grads,
            grad_cell * f,
            grad_stack,
            grad_summaries,
            grad_h_prev,
        )


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

    def remaining(
        self, words: torch.Tensor, lengths: torch.Tensor, packed: bool = True
    ) -> torch.Tensor:
        """Shape (B, N + 1, summary_dim): h of the buffer LSTM over words j..n-1 of each
        sentence, zeros from j = n on (an empty buffer). ``words``: (B, N, hidden_dim) h of
        the words, ``lengths``: (B,). ``packed=False`` runs the LSTM over all N positions
        (the same states at real words, the LSTM reading them first; the rest masked):
        nothing read back to the host, for static shapes."""
        batch_size, max_tokens, _ = words.shape
        positions = torch.arange(max_tokens, device=words.device).unsqueeze(0)
        # Word n - 1 - j of each sentence at position j: the words last to first.
        backwards = (lengths.unsqueeze(1) - 1 - positions).clamp(min=0)
        reversed_words = words.gather(1, backwards.unsqueeze(-1).expand_as(words))
        if packed:
            sequence = nn.utils.rnn.pack_padded_sequence(
                reversed_words, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False
            )
            states, _ = self.buffer(sequence)
            states, _ = nn.utils.rnn.pad_packed_sequence(
                states, batch_first=True, total_length=max_tokens
            )
        else:
            states, _ = self.buffer(reversed_words)
        # The state after reading words n-1..j sits at position n - 1 - j.
        summary = states.gather(1, backwards.unsqueeze(-1).expand(-1, -1, self.summary_dim))
        summary = summary * (positions < lengths.unsqueeze(1)).unsqueeze(-1)
        return torch.cat([summary, summary.new_zeros(batch_size, 1, self.summary_dim)], dim=1)
