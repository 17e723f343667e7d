"""One weight-gradient product per layer for a whole loop.

The thin stack's loop calls the same layers once per step on a few rows each (the 20-60
sentences that REDUCE, the <= B still running). Under plain autograd every call's backward
computes its own weight gradient ``G_t^T X_t``, a product whose inner size is the step's few
rows, and adds it into the parameter's gradient. :func:`loop_weights` instead gives a layer's
step functions (``cells.py``) a :class:`LoopLinear` that keeps each step's input rows ``X_t``
(forward) and output-gradient rows ``G_t`` (backward), and computes the weight gradient once,
at the end of the backward pass, as ``[G_1; ...; G_T]^T [X_1; ...; X_T]``: one large product,
and no per-step accumulation into the gradient.

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
"""

from typing import List, Optional, Tuple

import torch


class LoopLinear:
    """``y = x W^T (+ b)`` for the steps of one pass, as the step functions of a layer use it.

    What an autograd context may hold (it holds no token: see ``tape._Table`` for why a context
    must not reach the object that holds the graph). ``keeps`` is False when no gradient
    reaches the weights (no grad mode, frozen weights): then nothing is kept."""

    def __init__(self, weight: torch.Tensor, bias: Optional[torch.Tensor], keeps: bool) -> None:
        device_type = weight.device.type
        # As autocast: float64 is never cast.
        autocast = torch.is_autocast_enabled(device_type) and weight.dtype != torch.float64
        self.dtype = torch.get_autocast_dtype(device_type) if autocast else weight.dtype
        self.matrix = weight.detach().to(self.dtype)
        self.bias = None if bias is None else bias.detach()
        self.keeps = keeps
        self._inputs: List[torch.Tensor] = []
        self._grads: List[Optional[torch.Tensor]] = []

    def product(
        self, inputs: torch.Tensor, added: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, int]:
        """``inputs W^T + b + added`` in ``inputs``' dtype (the product in :attr:`dtype`), and
        the index :meth:`input_grad` takes in this step's backward (-1: nothing kept)."""
        low = self.dtype != inputs.dtype
        rows = inputs.to(self.dtype) if low else inputs
        index = -1
        if self.keeps:
            self._inputs.append(rows)
            self._grads.append(None)
            index = len(self._inputs) - 1
        addend = added if added is not None else self.bias
        if addend is not None and not low:
            out = torch.addmm(addend, rows, self.matrix.t())
            if added is not None and self.bias is not None:
                out.add_(self.bias)
        else:
            out = torch.mm(rows, self.matrix.t())
            if low:
                out = out.to(inputs.dtype)
            if added is not None:
                out.add_(added)
            if self.bias is not None:
                out.add_(self.bias)
        return out, index

    def input_grad(self, output_grad: torch.Tensor, index: int) -> torch.Tensor:
        """Keeps ``output_grad`` (the gradient of step ``index``'s output) for the weight
        gradient and returns ``output_grad W``, the gradient of its inputs, in
        ``output_grad``'s dtype."""
        low = self.dtype != output_grad.dtype
        grad = output_grad.to(self.dtype) if low else output_grad
        if index >= 0:
            self._grads[index] = grad
        out = grad.mm(self.matrix)
        return out.to(output_grad.dtype) if low else out

    def take(self) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
        """(X, G): the kept rows of every step that was run backward, stacked in step order.
        The gradients are cleared (a second backward through a retained graph keeps them
        again)."""
        pairs = [(x, g) for x, g in zip(self._inputs, self._grads) if g is not None]
        self._grads = [None] * len(self._inputs)
        if not pairs:
            return None
        inputs, grads = zip(*pairs)
        return torch.cat(inputs), torch.cat(grads)


def loop_weights(
    weight: torch.Tensor, bias: Optional[torch.Tensor] = None
) -> Tuple[LoopLinear, Optional[torch.Tensor]]:
    """The layer ``weight`` (out x in), ``bias`` (out) for one pass of a loop: its
    :class:`LoopLinear` and the token every step function takes as an input (None when no
    gradient reaches the weights)."""
    wanted = torch.is_grad_enabled() and (
        weight.requires_grad or (bias is not None and bias.requires_grad)
    )
    linear = LoopLinear(weight, bias, keeps=wanted)
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
        taken = ctx.linear.take()
        if taken is None:
            return None, None, None
        inputs, grads = taken
        # The whole loop's weight gradient in one product: (out, rows) x (rows, in).
        grad_weight = grads.t().mm(inputs).to(ctx.weight_dtype)
        grad_bias = grads.sum(dim=0, dtype=ctx.weight_dtype) if ctx.has_bias else None
        return None, grad_weight, grad_bias
