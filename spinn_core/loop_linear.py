"""One weight-gradient product per layer for a whole loop: :class:`LoopLinear` and
:func:`loop_weights`, what the step functions of the compositions (``compositions/``) and of
the tracker (``cells.py``) multiply with.

The thin stack's loop calls the same layers once per step on a few rows each (the 20-60
sentences that REDUCE, the <= B still running). Under plain autograd every call's backward
computes its own weight gradient ``G_t^T X_t``, a product whose inner size is the step's few
rows, and adds it into the parameter's gradient. :func:`loop_weights` instead gives a layer's
step functions (below) a :class:`LoopLinear` that keeps each step's input rows ``X_t``
(forward) and output-gradient rows ``G_t`` (backward), and computes the weight gradient once,
at the end of the backward pass, as ``[G_1; ...; G_T]^T [X_1; ...; X_T]``: a few large
products (one per block of ~1,000 rows), and no per-step accumulation into the gradient.

Order of the backward passes: the weights come with a zero-size token, the output of an
autograd function whose inputs are the weight (and bias); every step function takes the token
as an input. The autograd engine runs a function's backward only once every function that used
its output has run, so the token's backward -- the weight-gradient product -- runs after the
backward of every step, whatever else (the write-once tape's reads and writes) is interleaved
with them. A step whose output does not reach the loss is not run backward and keeps nothing:
it contributes nothing to the gradient either.

Memory: ``X_t`` is what a plain ``addmm`` saves for backward anyway; each ``G_t`` is kept from
its step's backward to the end of the pass (rows x output width: linear in the number of steps,
like everything else a pass keeps). Double backward through these functions is not supported.

Mixed precision: made under ``torch.autocast``, a :class:`LoopLinear` keeps a copy of the weight
in the autocast dtype, cast once per pass, and runs its products in it (what autocast does to a
plain ``addmm``, without casting the weight at every step); sums and the gradient returned to
the parameter stay in the parameter's dtype.


Rows per block of kept inputs and gradients past the first (or when the pass's rows are not
known): one weight-gradient product per block, large enough to run at the large-product rate
(a pass of B = 128 sentences of 10-30 words composes ~2,400 rows and runs the tracker on
~5,000).
"""

from typing import List, Optional, Tuple

import torch

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


def token_grad(ctx, like: torch.Tensor) -> Optional[torch.Tensor]:
    """The (empty) gradient of a step function's token, its second input (None without one)."""
    return like.new_zeros(0) if ctx.needs_input_grad[1] else None
