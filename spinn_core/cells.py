"""The neural layers SPINN is made of (paper §3.2-3.4): buffer projection, composition
functions, tracking LSTM and transition classifier. Each works on a batch of rows.

In this order: the loop's fused weight gradients (:class:`LoopLinear`, which the cells' step
functions use), the cells, and :class:`SpinnParts`, the parts as a runner sees them."""

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple, Type, Union

import torch
from torch import nn

from spinn_core.batch import Leaves, WriteOnceTape, add_rows

# ----------------------------------------------------------------------------------------------
# One weight-gradient product per layer for a whole loop.
#
# The thin stack's loop calls the same layers once per step on a few rows each (the 20-60
# sentences that REDUCE, the <= B still running). Under plain autograd every call's backward
# computes its own weight gradient ``G_t^T X_t``, a product whose inner size is the step's few
# rows, and adds it into the parameter's gradient. :func:`loop_weights` instead gives a layer's
# step functions (below) a :class:`LoopLinear` that keeps each step's input rows ``X_t``
# (forward) and output-gradient rows ``G_t`` (backward), and computes the weight gradient once,
# at the end of the backward pass, as ``[G_1; ...; G_T]^T [X_1; ...; X_T]``: a few large
# products (one per block of ~1,000 rows), and no per-step accumulation into the gradient.
#
# Order of the backward passes: the weights come with a zero-size token, the output of an
# autograd function whose inputs are the weight (and bias); every step function takes the token
# as an input. The autograd engine runs a function's backward only once every function that used
# its output has run, so the token's backward -- the weight-gradient product -- runs after the
# backward of every step, whatever else (the write-once tape's reads and writes) is interleaved
# with them. A step whose output does not reach the loss is not run backward and keeps nothing:
# it contributes nothing to the gradient either.
#
# Memory: ``X_t`` is what a plain ``addmm`` saves for backward anyway; each ``G_t`` is kept from
# its step's backward to the end of the pass (rows x output width: linear in the number of steps,
# like everything else a pass keeps). Double backward through these functions is not supported.
#
# Mixed precision: made under ``torch.autocast``, a :class:`LoopLinear` keeps a copy of the weight
# in the autocast dtype, cast once per pass, and runs its products in it (what autocast does to a
# plain ``addmm``, without casting the weight at every step); sums and the gradient returned to
# the parameter stay in the parameter's dtype.
# ----------------------------------------------------------------------------------------------


# Rows per block of kept inputs and gradients past the first (or when the pass's rows are not
# known): one weight-gradient product per block, large enough to run at the large-product rate
# (a pass of B = 128 sentences of 10-30 words composes ~2,400 rows and runs the tracker on
# ~5,000).
BLOCK_ROWS = 1024
# Up to how many rows a step's product takes the weight's contiguous transposed copy (CPU).
SMALL_ROWS = 64


class LoopLinear:
    """``y = x W^T (+ b)`` for the steps of one pass, as the step functions of a layer use it.

    Input rows are kept in blocks (a step's rows are one slice of a block, so nothing is copied
    again for the weight-gradient product), their output gradients in blocks beside them: the
    first block holds ``rows`` rows when the caller knows how many the pass will have (then
    the pass keeps exactly what it uses, in one block: one weight-gradient product), later
    ones :data:`BLOCK_ROWS`. What an autograd context may hold: it holds no token (see
    ``tape._Table`` for why a context must not reach the object that holds the graph).
    ``keeps`` is False when no gradient reaches the weights (no grad mode, frozen weights):
    then nothing is kept."""

    def __init__(
        self,
        weight: torch.Tensor,
        bias: Optional[torch.Tensor],
        keeps: bool,
        rows: Optional[int] = None,
    ) -> None:
        device_type = weight.device.type
        # As autocast: float64 is never cast.
        autocast = torch.is_autocast_enabled(device_type) and weight.dtype != torch.float64
        self.dtype = torch.get_autocast_dtype(device_type) if autocast else weight.dtype
        self.matrix = weight.detach().to(self.dtype)
        self.matrix_t = self.matrix.t()
        # On the CPU, the products of a step's few rows ran 1.3-2.2x faster with the weight
        # transposed into a contiguous copy than through the transposed view (MKL, one thread,
        # 5-30 rows; from 100 rows the view was 7-13 % faster): one copy a pass.
        self.small_matrix_t = (
            self.matrix_t.contiguous() if weight.device.type == "cpu" else self.matrix_t
        )
        self.bias = None if bias is None else bias.detach()
        self.keeps = keeps
        # Per block: inputs (BLOCK_ROWS, in), the rows used, and, once a backward reaches the
        # block, output gradients (BLOCK_ROWS, out) with the (start, rows) of each step's
        # gradient written.
        self._inputs: List[torch.Tensor] = []
        self._used: List[int] = []
        self._grads: List[Optional[torch.Tensor]] = []
        self._written: List[List[Tuple[int, int]]] = []
        self._grad_bytes = 0  # the most the kept gradients took (they are freed at the end)
        self._first_block = rows

    @property
    def nbytes(self) -> int:
        """Bytes of the kept input rows and the most the kept gradients took (memory
        measurements: ``spinn_core.testing.memory``)."""
        inputs = sum(block.numel() * block.element_size() for block in self._inputs)
        return inputs + self._grad_bytes

    def product(
        self, pieces: List[torch.Tensor], added: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, Tuple[int, int]]:
        """``x W^T + b + added`` for ``x`` the columns ``pieces`` side by side (each (r, ...)),
        in the pieces' dtype (the product in :attr:`dtype`), and where this step's rows are
        kept: the place :meth:`grad_rows` and :meth:`input_grad` take in its backward."""
        if self.keeps:
            rows = self._keep(pieces)
        else:
            rows = pieces[0] if len(pieces) == 1 else torch.cat(pieces, dim=1)
        place = (len(self._inputs) - 1, self._used[-1] - rows.size(0)) if self.keeps else (-1, 0)
        dtype = pieces[0].dtype
        matrix_t = self.small_matrix_t if rows.size(0) <= SMALL_ROWS else self.matrix_t
        if self.dtype == dtype:
            addend = added if added is not None else self.bias
            if addend is None:
                return torch.mm(rows, matrix_t), place
            out = torch.addmm(addend, rows, matrix_t)
            if added is not None and self.bias is not None:
                out.add_(self.bias)
            return out, place
        # Mixed precision: the product in self.dtype, the sums in the pieces' dtype.
        out = torch.mm(rows.to(self.dtype), matrix_t).to(dtype)
        if added is not None:
            out.add_(added)
        if self.bias is not None:
            out.add_(self.bias)
        return out, place

    def _keep(self, pieces: List[torch.Tensor]) -> torch.Tensor:
        count = pieces[0].size(0)
        if not self._inputs or self._used[-1] + count > self._inputs[-1].size(0):
            width = sum(piece.size(1) for piece in pieces)
            size = BLOCK_ROWS if self._inputs or not self._first_block else self._first_block
            block = pieces[0].new_empty(max(size, count), width, dtype=self.dtype)
            self._inputs.append(block)
            self._used.append(0)
            self._grads.append(None)
            self._written.append([])
        used = self._used[-1]
        rows = self._inputs[-1][used : used + count]
        torch.cat(pieces, dim=1, out=rows)
        self._used[-1] = used + count
        return rows

    def grad_rows(self, place: Tuple[int, int], width: int, like: torch.Tensor) -> torch.Tensor:
        """Where the backward of the step at ``place`` may write its output gradient, shape
        ``(like.size(0), width)`` in ``like``'s dtype: its rows of the kept gradients when they
        are kept in that dtype (then :meth:`input_grad` copies nothing), else a new tensor."""
        block, start = place
        if block >= 0 and like.dtype == self.dtype:
            return self._grad_block(block, width)[start : start + like.size(0)]
        return like.new_empty(like.size(0), width)

    def _grad_block(self, block: int, width: int) -> torch.Tensor:
        grads = self._grads[block]
        if grads is None:
            inputs = self._inputs[block]
            grads = self._grads[block] = inputs.new_empty(inputs.size(0), width)
            in_use = sum(g.numel() * g.element_size() for g in self._grads if g is not None)
            self._grad_bytes = max(self._grad_bytes, in_use)
        return grads

    def input_grad(self, output_grad: torch.Tensor, place: Tuple[int, int]) -> torch.Tensor:
        """Keeps ``output_grad``, the gradient of the output of the step at ``place``, for the
        weight gradient, and returns ``output_grad W``, the gradient of its inputs, in
        ``output_grad``'s dtype."""
        block, start = place
        grad = output_grad
        if block >= 0:
            kept = self._grad_block(block, output_grad.size(1))
            rows = kept[start : start + output_grad.size(0)]
            if rows.data_ptr() != output_grad.data_ptr():
                rows.copy_(output_grad)
            self._written[block].append((start, output_grad.size(0)))
            grad = rows
        elif grad.dtype != self.dtype:
            grad = grad.to(self.dtype)
        out = grad.mm(self.matrix)
        return out if out.dtype == output_grad.dtype else out.to(output_grad.dtype)

    def weight_grad(self, dtype: torch.dtype, bias: bool):
        """The weight's (and bias's) gradient over every kept step, one product per block of
        rows, in ``dtype``; (None, None) when no step was run backward. Clears the kept
        gradients (a second backward through a retained graph keeps them again)."""
        grad_weight: Optional[torch.Tensor] = None
        grad_bias: Optional[torch.Tensor] = None
        for block, (inputs, grads) in enumerate(zip(self._inputs, self._grads)):
            if grads is None:
                continue
            used = self._used[block]
            inputs, grads = inputs[:used], grads[:used]
            written = self._written[block]
            if sum(count for _, count in written) < used:
                # Steps whose backward did not run (their output did not reach the loss).
                unwritten = torch.ones(used, 1, dtype=torch.bool, device=grads.device)
                for start, count in written:
                    unwritten[start : start + count] = False
                grads.masked_fill_(unwritten, 0)  # (no boolean indexing: nothing read back)
            # (out, rows) x (rows, in): the block's share of the whole loop's weight gradient.
            if grad_weight is None:
                grad_weight = grads.t().mm(inputs).to(dtype)
            elif grads.dtype == dtype:
                grad_weight.addmm_(grads.t(), inputs)
            else:
                grad_weight.add_(grads.t().mm(inputs))
            if bias:
                block_bias = grads.sum(dim=0, dtype=dtype)
                grad_bias = block_bias if grad_bias is None else grad_bias.add_(block_bias)
        self._grads = [None] * len(self._inputs)
        self._written = [[] for _ in self._inputs]
        return grad_weight, grad_bias


def loop_weights(
    weight: torch.Tensor, bias: Optional[torch.Tensor] = None, rows: Optional[int] = None
) -> Tuple[LoopLinear, Optional[torch.Tensor]]:
    """The layer ``weight`` (out x in), ``bias`` (out) for one pass of a loop that multiplies
    ``rows`` rows in all (if known): its :class:`LoopLinear` and the token every step function
    takes as an input (None when no gradient reaches the weights)."""
    wanted = torch.is_grad_enabled() and (
        weight.requires_grad or (bias is not None and bias.requires_grad)
    )
    linear = LoopLinear(weight, bias, keeps=wanted, rows=rows)
    token = _WeightGradient.apply(linear, weight, bias) if wanted else None
    return linear, token


class _WeightGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, linear: LoopLinear, weight, bias):
        ctx.linear = linear
        ctx.weight_dtype = weight.dtype
        ctx.has_bias = bias is not None
        return weight.new_zeros(0)

    @staticmethod
    def backward(ctx, grad_token):
        grad_weight, grad_bias = ctx.linear.weight_grad(ctx.weight_dtype, ctx.has_bias)
        return None, grad_weight, grad_bias


class LoopComposition:
    """A composition for the steps of one pass (``Composition.loop``): called as
    ``(children, extra) -> nodes`` with ``children`` (r, 2, node_dim) each row's left and right
    child and ``extra`` (r, extra_dim) its extra input or None; or :meth:`onto` a tape, reading
    the children there and writing the nodes back (what a thin-stack step does)."""

    def __init__(self, compose: Callable[[torch.Tensor, Optional[torch.Tensor]], torch.Tensor]):
        self.compose = compose

    def __call__(self, children: torch.Tensor, extra: Optional[torch.Tensor]) -> torch.Tensor:
        return self.compose(children, extra)

    def onto(
        self,
        tape: WriteOnceTape,
        children: torch.Tensor,
        written: torch.Tensor,
        extra: Optional[torch.Tensor],
    ) -> None:
        """Rows ``written`` (r,) of ``tape`` := the composition of rows ``children`` (2r,:
        each node's left then right child) with ``extra``."""
        nodes = tape.read(children)
        tape.write(written, self(nodes.view(written.size(0), 2, nodes.size(1)), extra))


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


class Composition(nn.Module):
    """What the thin stack needs of a composition function: ``forward(left, right, extra)``
    maps two children's node rows (and an optional extra input per row, e.g. the tracker's
    state) to the parent's node row, and ``hidden(nodes)`` reads h out of node rows: their
    first ``hidden_dim`` columns.

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

    def loop(self, rows: Optional[int] = None) -> LoopComposition:
        """The composition for the many small calls of one pass of a step loop (the thin
        stack, :class:`LoopComposition`); ``rows``: how many rows the pass will compose in
        all, when known. The same function as :meth:`forward`; a composition may compute it
        faster here (one weight-gradient product for the whole pass, fused steps). Call once
        per pass."""
        return LoopComposition(lambda children, extra: self(children[:, 0], children[:, 1], extra))


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

    def loop(self, rows: Optional[int] = None) -> LoopComposition:
        """Eq. 1-3 as one autograd function per step (:class:`_TreeLSTMStep`: the gates'
        product, nonlinearities and cell update in forward, their derivatives written out in
        backward), the weight gradient computed once for the whole pass (:class:`LoopLinear`).
        Without gradients, the same arithmetic with no autograd function around it."""
        return _TreeLSTMLoop(*loop_weights(self.linear.weight, self.linear.bias, rows))


class _TreeLSTMLoop(LoopComposition):
    """Eq. 1-3 for the steps of a pass (see :meth:`TreeLSTMComposition.loop`); on a tape, a
    step's reads, composition and write are one autograd function (:class:`_TreeLSTMOnTape`)."""

    def __init__(self, linear: LoopLinear, token: Optional[torch.Tensor]) -> None:
        # (No bound method of its own kept: that would be a reference cycle holding the pass.)
        self.linear, self.token = linear, token

    def __call__(self, children: torch.Tensor, extra: Optional[torch.Tensor]) -> torch.Tensor:
        if self.token is None and not torch.is_grad_enabled():
            return _tree_lstm(self.linear, children, extra)[0]
        return _TreeLSTMStep.apply(self.linear, self.token, children, extra)

    def onto(self, tape, children, written, extra) -> None:
        if not torch.is_grad_enabled():
            super().onto(tape, children, written, extra)
            return
        tape.advance(
            _TreeLSTMOnTape.apply(
                tape.table, tape.token, self.linear, self.token, children, written, extra
            )
        )


def _tree_lstm(linear: LoopLinear, children: torch.Tensor, extra: Optional[torch.Tensor]):
    """Eq. 1-3 for r rows: ``children`` (r, 2, 2D) = [left; right] node rows [h; c], ``extra``
    (r, E) or None. Returns the parent rows (r, 2D) = [h; c] and what the backward pass needs:
    the sigmoid gates (r, 4, D) = i, f_left, f_right, o; tanh(g); tanh(c); the product's
    place."""
    rows, _, width = children.shape
    size = width // 2
    h_children, c_children = children.view(rows, 2, 2, size).unbind(2)  # (r, 2, D) each
    h_children = h_children.reshape(rows, 2 * size)  # [h_left; h_right]
    pieces = [h_children] if extra is None else [h_children, extra]
    gates, place = linear.product(pieces)  # (r, 5D): i, f_left, f_right, o | g
    tanh_g = torch.tanh(gates[:, 4 * size :])
    acts = gates[:, : 4 * size].sigmoid_().view(rows, 4, size)
    i, f_left, f_right, o = acts.unbind(1)
    c_left, c_right = c_children.unbind(1)
    # c = f_l * c_l + f_r * c_r + i * g; h = o * tanh(c)
    c = f_left * c_left
    c.addcmul_(f_right, c_right).addcmul_(i, tanh_g)
    tanh_c = torch.tanh(c)
    return torch.cat([o * tanh_c, c], dim=1), acts, tanh_g, tanh_c, place


class _TreeLSTMStep(torch.autograd.Function):
    """One TreeLSTM composition (eq. 1-3) of r rows (:func:`_tree_lstm`): ``children``
    (r, 2, 2D) = [left; right] node rows [h; c], ``extra`` (r, E) or None -> (r, 2D) parent
    rows [h; c]. Saves the gate activations, tanh(g), tanh(c) and the children; the product's
    input rows are kept by the :class:`LoopLinear` for the pass's one weight-gradient
    product."""

    @staticmethod
    def forward(ctx, linear: LoopLinear, token, children, extra):
        out, acts, tanh_g, tanh_c, place = _tree_lstm(linear, children, extra)
        ctx.linear, ctx.place, ctx.has_extra = linear, place, extra is not None
        ctx.save_for_backward(acts, tanh_g, tanh_c, children)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        acts, tanh_g, tanh_c, children = ctx.saved_tensors
        grad_children, grad_extra = _tree_lstm_backward(
            ctx, grad_out, acts, tanh_g, tanh_c, children
        )
        return None, _token_grad(ctx, grad_out), grad_children, grad_extra


class _TreeLSTMOnTape(torch.autograd.Function):
    """A thin-stack step's composition on the tape (``batch.WriteOnceTape``): the children's
    rows read, composed (:func:`_tree_lstm`) and the nodes written, as one autograd function.
    Its backward does what the read's, the composition's and the write's would: takes the
    written rows' gradients from the tape's gradient table (and clears them), runs the
    composition's backward and adds the children's gradients into the table. The tape's token
    in and out keeps the order of the backward passes (``batch.WriteOnceTape``); the weights'
    token (input 3) makes the pass's weight-gradient product run after every step's
    (:class:`LoopLinear`)."""

    @staticmethod
    def forward(ctx, table, tape_token, linear: LoopLinear, token, rows, written, extra):
        data = table.data
        children = data.index_select(0, rows).view(written.size(0), 2, data.size(1))
        out, acts, tanh_g, tanh_c, place = _tree_lstm(linear, children, extra)
        data.index_copy_(0, written, out if out.dtype == data.dtype else out.to(data.dtype))
        ctx.table, ctx.linear, ctx.place, ctx.has_extra = table, linear, place, extra is not None
        ctx.out_dtype = out.dtype
        ctx.save_for_backward(acts, tanh_g, tanh_c, children, rows, written)
        return tape_token.new_zeros(0)

    @staticmethod
    def backward(ctx, grad_token):
        acts, tanh_g, tanh_c, children, rows, written = ctx.saved_tensors
        grads = ctx.table.grad_table()
        grad_out = grads.index_select(0, written)
        # Cleared so that a second backward through a retained graph starts from zero.
        grads.index_fill_(0, written, 0)
        if grad_out.dtype != ctx.out_dtype:
            grad_out = grad_out.to(ctx.out_dtype)
        grad_children, grad_extra = _tree_lstm_backward(
            ctx, grad_out, acts, tanh_g, tanh_c, children
        )
        add_rows(grads, rows, grad_children.view(rows.size(0), -1))
        token_grad = grad_token.new_zeros(0) if ctx.needs_input_grad[3] else None
        return None, grad_token.new_zeros(0), None, token_grad, None, None, grad_extra


def _tree_lstm_backward(ctx, grad_out, acts, tanh_g, tanh_c, children):
    """The gradients of :func:`_tree_lstm`'s children (r, 2, 2D) and extra input (or None)
    from its output's, ``grad_out`` (r, 2D); ``ctx`` holds its ``linear``, ``place`` and
    ``has_extra``."""
    rows, _, width = children.shape
    size = width // 2
    grad_h, grad_c = grad_out[:, :size], grad_out[:, size:]
    # dL/dc, through h = o * tanh(c) and directly.
    grad_cell = torch.ops.aten.tanh_backward(grad_h * acts[:, 3], tanh_c).add_(grad_c)
    # Gradients of the gate pre-activations, (r, 5D): [i, f_l, f_r, o | g].
    grads = ctx.linear.grad_rows(ctx.place, 5 * size, children)
    sigmoid_part = grads[:, : 4 * size].view(rows, 4, size)
    torch.mul(grad_cell, tanh_g, out=sigmoid_part[:, 0])
    torch.mul(grad_cell.unsqueeze(1), children[:, :, size:], out=sigmoid_part[:, 1:3])
    torch.mul(grad_h, tanh_c, out=sigmoid_part[:, 3])
    torch.ops.aten.sigmoid_backward.grad_input(
        grads[:, : 4 * size], acts.view(rows, 4 * size), grad_input=grads[:, : 4 * size]
    )
    tanh_part = grads[:, 4 * size :]
    torch.mul(grad_cell, acts[:, 0], out=tanh_part)
    torch.ops.aten.tanh_backward.grad_input(tanh_part, tanh_g, grad_input=tanh_part)
    grad_inputs = ctx.linear.input_grad(grads, ctx.place)
    grad_children = children.new_empty(children.shape)
    grad_children[:, :, :size] = grad_inputs[:, : 2 * size].view(rows, 2, size)
    torch.mul(grad_cell.unsqueeze(1), acts[:, 1:3], out=grad_children[:, :, size:])
    grad_extra = grad_inputs[:, 2 * size :] if ctx.has_extra else None
    return grad_children, grad_extra


def _token_grad(ctx, like: torch.Tensor) -> Optional[torch.Tensor]:
    """The (empty) gradient of a step function's token, its second input (None without one)."""
    return like.new_zeros(0) if ctx.needs_input_grad[1] else None


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


class GRCComposition(Composition):
    """The gated recursive cell (GRC) of Ordered Memory (Shen et al. 2019), the cell of the Beam
    Tree Cell's best ListOps model (BT-GRC, Ray Chowdhury and Caragea 2023): a two-layer MLP of
    the children (and the extra input ``e``) proposes the parent's content ``c`` and three
    gates, and the parent is the layer-normalised gated sum of the two children and ``c``,

        [g_l; g_r; g_c; c] = W_2 GELU(W_1 [l; r; e] + b_1) + b_2,
        p = LayerNorm(sigmoid(g_l) * l + sigmoid(g_r) * r + sigmoid(g_c) * c).

    A parent can pass either child through nearly unchanged, which a TreeLSTM's ``o * tanh(c)``
    cannot. Nodes are h only (width D); the MLP's hidden layer is ``4 D`` wide."""

    def __init__(self, hidden_dim: int, extra_dim: int = 0) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.extra_dim = extra_dim
        self.node_dim = hidden_dim
        self.hidden_layer = nn.Linear(2 * hidden_dim + extra_dim, 4 * hidden_dim)
        self.output_layer = nn.Linear(4 * hidden_dim, 4 * hidden_dim)
        self.norm = nn.LayerNorm(hidden_dim)

    def forward(
        self, left: torch.Tensor, right: torch.Tensor, extra: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        features = [left, right] if extra is None else [left, right, extra]
        proposed = self.hidden_layer(torch.cat(features, dim=-1))
        return self._parent(left, right, proposed)

    def leaf(self, extra: torch.Tensor) -> torch.Tensor:
        # Zero children: only the extra input's columns and the bias remain in the first
        # layer, and the gated children vanish from the sum.
        proposed = nn.functional.linear(
            extra, self.hidden_layer.weight[:, 2 * self.hidden_dim :], self.hidden_layer.bias
        )
        zeros = extra.new_zeros(extra.shape[:-1] + (self.hidden_dim,))
        return self._parent(zeros, zeros, proposed)

    def _parent(
        self, left: torch.Tensor, right: torch.Tensor, proposed: torch.Tensor
    ) -> torch.Tensor:
        gates, content = self.output_layer(nn.functional.gelu(proposed)).split(
            [3 * self.hidden_dim, self.hidden_dim], dim=-1
        )
        g_left, g_right, g_content = torch.sigmoid(gates).chunk(3, dim=-1)
        gated_sum = g_left * left + g_right * right + g_content * content
        # Called as a function, not as the module: AllenNLP's trainer runs a confidence check
        # that fails any layer with a bias whose module call is followed by a normalisation
        # module's, and stops training. Here that bias is not redundant (it moves the sigmoid
        # gates, not the normalised sum), so the check's premise does not hold.
        norm = self.norm
        return nn.functional.layer_norm(
            gated_sum, norm.normalized_shape, norm.weight, norm.bias, norm.eps
        )

    @staticmethod
    def hidden(nodes: torch.Tensor) -> torch.Tensor:
        return nodes


COMPOSITIONS: Dict[str, Type[Composition]] = {
    "treelstm": TreeLSTMComposition,
    "treernn": TreeRNNComposition,
    "grc": GRCComposition,
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
            _token_grad(ctx, grads),
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


# ----------------------------------------------------------------------------------------------
# The model's parts as a runner sees them: the layers a pass composes with, and the one place
# where the composition's extra input is assembled.
# ----------------------------------------------------------------------------------------------


@dataclass
class SpinnParts:
    """What a runner needs of a model (``Spinn.parts()``); absent parts are None.

    * ``leaves``: (inputs, mask) -> the buffer's node rows (eq. 4's projection, or the cell
      with no children);
    * ``compose``: the composition (TreeLSTM, TreeRNN), ``compose(left, right, extra)``;
    * ``tracker``: the tracking LSTM (§3.3), with the parser's transition classifier when the
      model has one (eq. 5);
    * ``summaries``: LSTM summaries of the whole stack and buffer for the tracker (NSHRDLU
      §3.1);
    * ``type_embedding`` / ``type_classifier``: typed REDUCE (NSHRDLU §3.3);
    * ``static_shapes``: which way through the thin stack's loop (``runners/thin_stack.py``)
      and the soft stack's: with static shapes (True: every step works on the whole batch,
      nothing is read back to the host, as a CUDA graph needs) or sparse (False: the running
      sentences only, composing those that REDUCE), or by device (None: sparse on the CPU,
      static shapes elsewhere).
    """

    leaves: Leaves
    compose: Composition
    tracker: Optional[Tracker] = None
    summaries: Optional[Summaries] = None
    type_embedding: Optional[nn.Embedding] = None
    type_classifier: Optional[nn.Linear] = None
    static_shapes: Optional[bool] = None
    # False: the tracker's state stays out of the composition's extra input (the tracker only
    # parses).
    composition_reads_tracker: bool = True
    # False: the tracker reads the nodes' h detached, so nothing the parser computes (its
    # losses, or its state) sends gradients back into the nodes (see Spinn).
    parser_trains_nodes: bool = True

    @property
    def node_dim(self) -> int:
        return self.compose.node_dim

    def uses_static_shapes(self, device: torch.device) -> bool:
        """Whether a pass on ``device`` takes the static-shape path (see ``static_shapes``)."""
        if self.static_shapes is not None:
            return self.static_shapes
        return device.type != "cpu"

    @property
    def has_parser(self) -> bool:
        return self.tracker is not None and self.tracker.transition_classifier is not None

    def parser_view(self, hidden: torch.Tensor) -> torch.Tensor:
        """The nodes' h as the tracker (and the summaries it reads) take them: detached when
        the parser must not train them (``parser_trains_nodes=False``)."""
        return hidden if self.parser_trains_nodes else hidden.detach()

    def type_vector(self, types: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        """The embedding of each REDUCE type (typed REDUCE), None otherwise; ``types`` may be
        -1 where a sentence shifts (read as type 0, never used)."""
        if self.type_embedding is None or types is None:
            return None
        return self.type_embedding(types.clamp(min=0))

    def extra_input(
        self,
        tracker_state: Optional[torch.Tensor],
        node_input: Optional[torch.Tensor] = None,
        type_vector: Optional[torch.Tensor] = None,
    ) -> Optional[torch.Tensor]:
        """The composition's extra input, ``[tracker state; node input; type vector]`` with
        the absent ones left out (None when all are): the only place it is assembled, so every
        runner gives a composition the same layout its weights were trained with."""
        if not self.composition_reads_tracker:
            tracker_state = None
        pieces = [p for p in (tracker_state, node_input, type_vector) if p is not None]
        if not pieces:
            return None
        return pieces[0] if len(pieces) == 1 else torch.cat(pieces, dim=-1)
