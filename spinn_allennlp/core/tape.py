"""A write-once tape: the thin stack's memory, with a backward pass that stays O(rows x width).

The thin stack (paper §3.5, Algorithm 1) writes every row of its memory exactly once and reads
rows through pointers. Done with ordinary tensors under autograd this costs more than it looks:
an out-of-place scatter per step saves a full copy of the stack every step (O(T^2) memory), and
even in-place writes make every backward step clone the whole gradient of the memory (O(T^2)
time). Here reads and writes are two small autograd functions that share one gradient table:

* ``read(index)`` returns the rows at ``index``; its backward adds the incoming gradient into
  the shared table at ``index``.
* ``write(index, value)`` copies ``value`` into the rows; its backward hands the table's rows at
  ``index`` to ``value`` (and clears them).

Neither saves anything for backward but its index vector. A zero-size "token" tensor threads
through every call in program order, so the autograd engine runs a write's backward only after
the backward of every read that came later, i.e. after the row's gradient is complete.
"""
from typing import Optional

import torch


class WriteOnceTape:
    """A ``(num_rows, width)`` table written a row at a time, each row at most once."""

    def __init__(self, num_rows: int, width: int, like: torch.Tensor) -> None:
        self.data = like.new_zeros(num_rows, width)
        self.grad: Optional[torch.Tensor] = None  # allocated by the first backward that needs it
        # The token orders the backward passes (see the module docstring).
        self._token = like.new_zeros(0)

    def write(self, index: torch.Tensor, value: torch.Tensor) -> None:
        self._token = _Write.apply(self, self._token, value, index)

    def read(self, index: torch.Tensor) -> torch.Tensor:
        return _Read.apply(self, self._token, index)

    def _grad_table(self) -> torch.Tensor:
        if self.grad is None:
            self.grad = torch.zeros_like(self.data)
        return self.grad

    @property
    def nbytes(self) -> int:
        """Bytes held by the table (and by its gradient, once backward has started)."""
        grad_bytes = 0 if self.grad is None else self.grad.numel() * self.grad.element_size()
        return self.data.numel() * self.data.element_size() + grad_bytes


class _Write(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tape: WriteOnceTape, token, value, index):  # type: ignore[override]
        tape.data.index_copy_(0, index, value.to(tape.data.dtype))
        ctx.tape = tape
        ctx.value_dtype = value.dtype
        ctx.save_for_backward(index)
        return token.new_zeros(0)

    @staticmethod
    def backward(ctx, grad_token):  # type: ignore[override]
        (index,) = ctx.saved_tensors
        table = ctx.tape._grad_table()
        grad_value = table.index_select(0, index).to(ctx.value_dtype)
        # Cleared so that a second backward through a retained graph starts from zero.
        table.index_fill_(0, index, 0)
        return None, grad_token.new_zeros(0), grad_value, None


class _Read(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tape: WriteOnceTape, token, index):  # type: ignore[override]
        ctx.tape = tape
        ctx.save_for_backward(index)
        return tape.data.index_select(0, index)

    @staticmethod
    def backward(ctx, grad_rows):  # type: ignore[override]
        (index,) = ctx.saved_tensors
        # index_put_ with accumulate sums repeated indices like index_add_, but index_add_ on
        # CPU (a scatter_add_ underneath) was measured 10-1000x slower here.
        ctx.tape._grad_table().index_put_((index,), grad_rows.to(ctx.tape.data.dtype),
                                          accumulate=True)
        return None, grad_rows.new_zeros(0), None
