"""A write-once tape: the thin stack's memory, with a backward pass that stays O(rows x width).

The thin stack (paper §3.5, Algorithm 1) writes every row of its memory exactly once and reads
rows through pointers. Done with ordinary tensors under autograd this costs more than it looks:
an out-of-place scatter per step saves a full copy of the stack every step (O(T^2) memory), and
even in-place writes make every backward step clone the whole gradient of the memory (O(T^2)
time). Here reads and writes are two small autograd functions (``_Read``, ``_Write``) that share
one gradient table (``_Table``):

* ``read(index)`` returns the rows at ``index``; its backward adds the incoming gradient into
  the shared table at ``index`` (:func:`add_rows`).
* ``write(index, value)`` copies ``value`` into the rows; its backward hands the table's rows at
  ``index`` to ``value`` (and clears them).

Neither saves anything for backward but its index vector. A zero-size "token" tensor threads
through every call in program order, so the autograd engine runs a write's backward only after
the backward of every read that came later, i.e. after the row's gradient is complete.

The prepared batch (``batch.py``) lays a pass's nodes out on one :class:`WriteOnceTape`; the
tracker's projected buffer tops, the soft stack's levels and the Child-Sum Tree-LSTM's states
have tapes of their own.
"""

from typing import Optional

import torch


class _Table:
    """The rows and their gradient. Autograd contexts hold this, never the tape itself: the
    tape holds the latest token, whose graph holds the contexts, and a context pointing back at
    the tape would make a cycle through autograd's C++ nodes that Python's garbage collector
    cannot free (every batch's graph leaked until that was fixed)."""

    def __init__(self, data: torch.Tensor) -> None:
        self.data = data
        self.grad: Optional[torch.Tensor] = None  # allocated by the first backward needing it

    def grad_table(self) -> torch.Tensor:
        if self.grad is None:
            self.grad = torch.zeros_like(self.data)
        return self.grad


class WriteOnceTape:
    """A ``(num_rows, width)`` table written a row at a time, each row at most once."""

    def __init__(
        self,
        num_rows: int,
        width: int,
        like: torch.Tensor,
        zero_rows: Optional[torch.Tensor] = None,
    ) -> None:
        if zero_rows is None:
            data = like.new_zeros(num_rows, width)
        else:
            # The caller reads no row before writing it but ``zero_rows`` (its "nothing here"
            # rows), so the rest can start uninitialised: zeroing it all was 12% of a forward.
            data = like.new_empty(num_rows, width)
            data.index_fill_(0, zero_rows, 0)
        self._table = _Table(data)
        # The token orders the backward passes (see the module docstring).
        self._token = like.new_zeros(0)

    @property
    def data(self) -> torch.Tensor:
        return self._table.data

    @property
    def table(self) -> "_Table":
        """The rows and their gradient table, for reads defined elsewhere (an autograd function
        whose forward reads ``table.data`` and whose backward adds into ``table.grad_table()``,
        taking :attr:`token` as an input so that it runs before earlier writes' backward; see
        ``soft_stack.py``)."""
        return self._table

    @property
    def token(self) -> torch.Tensor:
        """The latest write's token (see the module docstring)."""
        return self._token

    def advance(self, token: torch.Tensor) -> None:
        """Takes ``token`` as the latest write's: the output of an autograd function defined
        elsewhere that took :attr:`token` as an input and wrote to :attr:`table` (its backward
        hands the written rows' gradients on and clears them, as a write's does)."""
        self._token = token

    def write(self, index: torch.Tensor, value: torch.Tensor) -> None:
        if not torch.is_grad_enabled():  # nothing to order: no autograd function
            data = self._table.data
            data.index_copy_(0, index, value if value.dtype == data.dtype else value.to(data.dtype))
            return
        self._token = _Write.apply(self._table, self._token, value, index)

    def read(self, index: torch.Tensor, columns: Optional[int] = None) -> torch.Tensor:
        """The rows at ``index`` (their first ``columns`` columns, when given)."""
        if not torch.is_grad_enabled():
            data = self._table.data
            return (data if columns is None else data[:, :columns]).index_select(0, index)
        return _Read.apply(self._table, self._token, index, columns)

    @property
    def nbytes(self) -> int:
        """Bytes held by the table (and by its gradient, once backward has started)."""
        grad = self._table.grad
        grad_bytes = 0 if grad is None else grad.numel() * grad.element_size()
        return self.data.numel() * self.data.element_size() + grad_bytes


class _Write(torch.autograd.Function):
    @staticmethod
    def forward(ctx, table: _Table, token, value, index):
        table.data.index_copy_(
            0, index, value if value.dtype == table.data.dtype else value.to(table.data.dtype)
        )
        ctx.table = table
        ctx.value_dtype = value.dtype
        ctx.save_for_backward(index)
        return token.new_zeros(0)

    @staticmethod
    def backward(ctx, grad_token):
        (index,) = ctx.saved_tensors
        grads = ctx.table.grad_table()
        grad_value = grads.index_select(0, index)
        if grad_value.dtype != ctx.value_dtype:
            grad_value = grad_value.to(ctx.value_dtype)
        # Cleared so that a second backward through a retained graph starts from zero.
        grads.index_fill_(0, index, 0)
        return None, grad_token.new_zeros(0), grad_value, None


class _Read(torch.autograd.Function):
    @staticmethod
    def forward(ctx, table: _Table, token, index, columns):
        ctx.table = table
        ctx.columns = columns
        ctx.save_for_backward(index)
        data = table.data if columns is None else table.data[:, :columns]
        return data.index_select(0, index)

    @staticmethod
    def backward(ctx, grad_rows):
        (index,) = ctx.saved_tensors
        add_rows(ctx.table.grad_table(), index, grad_rows, ctx.columns)
        return None, grad_rows.new_zeros(0), None, None


def add_rows(
    grads: torch.Tensor, index: torch.Tensor, rows: torch.Tensor, columns: Optional[int] = None
) -> None:
    """``grads[index, :columns] += rows``, repeated indices summed: a read's backward."""
    if rows.dtype != grads.dtype:
        rows = rows.to(grads.dtype)
    # Both sum repeated indices. On the CPU with torch 2.13 (rows of 600 floats) index_add_
    # was measured 2-3x faster than index_put_(accumulate=True) on whole rows and 3x slower on
    # the first columns of each row (a strided view); an older setup had found index_add_ far
    # slower, so measure again before changing this. On GPUs index_put_ (no atomics: the same
    # sums every run).
    if columns is None and grads.device.type == "cpu":
        grads.index_add_(0, index, rows)
    else:
        grads[:, :columns].index_put_((index,), rows, accumulate=True)
