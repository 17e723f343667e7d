"""What every composition is: :class:`Composition` (a module mapping two children's node rows,
and an optional extra input, to their parent's) and :class:`LoopComposition` (the same function
for the many small calls of one pass of a step loop). The compositions themselves live beside
this module, one file each, registered by name (``compositions/__init__.py``)."""

from typing import Callable, Optional

import torch
from torch import nn

from spinn_core.tape import WriteOnceTape


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
