"""Measuring what a training step keeps for backward, on any device (tests and benchmarks).

CPU PyTorch has no allocator statistics, so this counts the tensors autograd saves (through
saved-tensor hooks, each storage once: views share one) plus the tables of every
``WriteOnceTape`` made during the step, which hold the thin stack but are not saved tensors
(the tape's functions save only index vectors), and the rows every ``LoopLinear`` keeps for
its one weight-gradient product (inputs, and the output gradients of the backward pass).
"""

from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List

import torch

from spinn_core.loop_linear import LoopLinear
from spinn_core.tape import WriteOnceTape


@contextmanager
def recording_tapes() -> Iterator[List[WriteOnceTape]]:
    """Collects every WriteOnceTape created inside the block."""
    tapes: List[WriteOnceTape] = []
    original_init = WriteOnceTape.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        tapes.append(self)

    WriteOnceTape.__init__ = init  # type: ignore[method-assign]
    try:
        yield tapes
    finally:
        WriteOnceTape.__init__ = original_init  # type: ignore[method-assign]


@contextmanager
def recording_loop_layers() -> Iterator[List[LoopLinear]]:
    """Collects every LoopLinear created inside the block."""
    made: List[LoopLinear] = []
    original_init = LoopLinear.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        made.append(self)

    LoopLinear.__init__ = init  # type: ignore[method-assign]
    try:
        yield made
    finally:
        LoopLinear.__init__ = original_init  # type: ignore[method-assign]


def saved_for_backward_bytes(step: Callable[[], torch.Tensor]) -> int:
    """Runs ``step()`` (which returns a loss) and its backward; returns the bytes of the saved
    tensors plus the tapes' tables (data and gradient) and the loop layers' kept rows — what
    the graph holds at its peak."""
    storages: Dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with recording_tapes() as tapes, recording_loop_layers() as loops:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            loss = step()
        loss.backward()
    kept = sum(tape.nbytes for tape in tapes) + sum(loop.nbytes for loop in loops)
    return sum(storages.values()) + kept
