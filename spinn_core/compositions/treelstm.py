"""Eq. 1-3: the binary TreeLSTM, with its loop form (one autograd function a step, the
weight gradient once a pass) and the composition written onto the thin stack's tape."""

from typing import Optional

import torch
from torch import nn

from spinn_core.compositions.base import Composition, LoopComposition
from spinn_core.compositions.registry import register_composition
from spinn_core.loop_linear import LoopLinear, loop_weights, token_grad
from spinn_core.tape import add_rows


@register_composition("treelstm")
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
        return None, token_grad(ctx, grad_out), grad_children, grad_extra


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
