"""Two autograd helpers an encoder uses to train its parser inside any model and to notice when
nothing does: :func:`attach_loss` carries a loss of the encoder's own into whatever backward pass
goes through its output, and :class:`GradientProbe` records whether any gradient reached a
parameter."""

from typing import Optional

import torch


class _AttachedLoss(torch.autograd.Function):
    """Identity on ``tensor``; in backward, also sends a gradient of 1 into ``loss``."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
        ctx.loss_like = (loss.dtype, loss.device)
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        dtype, device = ctx.loss_like
        return grad, torch.ones((), dtype=dtype, device=device)


def attach_loss(tensor: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
    """``tensor`` unchanged, carrying ``loss`` (a scalar) into any backward pass through it.

    Whatever loss a model backpropagates through the returned tensor, the parameters behind
    ``loss`` get the gradient of ``loss`` as well, once per backward pass (autograd sums the
    tensor's gradients before calling this backward): an encoder can train an auxiliary
    objective of its own inside a model that knows nothing of it. The loss's value is not added
    to what the model reports.
    """
    return _AttachedLoss.apply(tensor, loss)


class GradientProbe:
    """Records whether any gradient reached a parameter passed to :meth:`watch`: how an
    encoder notices that nothing trains its parser.

    It hooks the parameter itself, so it sees every path a gradient can take to it: a
    transition loss on the logits, REINFORCE through the log-probabilities of the moves taken,
    or the soft stack's strengths inside the loop. The hook is removed (:meth:`release`) once
    it has fired, so a trained model carries none.
    """

    def __init__(self) -> None:
        self.reached = False
        self._handle: Optional[torch.utils.hooks.RemovableHandle] = None

    def watch(self, parameter: torch.Tensor) -> None:
        if self._handle is None and not self.reached:
            self._handle = parameter.register_hook(self._mark)

    def _mark(self, grad: torch.Tensor) -> None:
        self.reached = True

    def release(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
