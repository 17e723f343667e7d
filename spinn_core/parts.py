"""The model's parts as a runner sees them (:class:`SpinnParts`): the layers a pass composes
with, and the one place where the composition's extra input is assembled."""

from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn

from spinn_core.batch import Leaves
from spinn_core.cells import Summaries, Tracker
from spinn_core.compositions import Composition


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
