"""Whether a region of code qualifies for a CUDA graph, checked on any CPU.

A CUDA graph replays a fixed sequence of kernels on fixed shapes and addresses, so the region it
captures must never wait for the GPU to tell the host something: no value read back (``.item()``,
``bool(tensor)``, ``.tolist()``, ``.numpy()``), no operation whose output size depends on values
(``nonzero``, ``masked_select``, boolean-mask indexing, ``unique``, ``bincount``, ...), no tensor
made from Python data on the way (a host-to-device copy there), and no shape that depends on
the data. :class:`HostReads` records every ATen operation a region dispatches (as
``benchmarks/op_counts.py`` counts them), with its tensors' shapes and dtypes and its other
arguments, and lists what breaks those rules, with the line of the project's code that did it.
Running the same region on two batches of one bucket and comparing the records shows whether
anything about the operations depends on the data (:func:`first_difference`).

The rules come from ATen's own operator tags (``dynamic_output_shape``,
``data_dependent_output``), plus boolean indices, ``is_nonzero``, tensors built from Python
sequences (``lift_fresh`` of a tensor with dimensions; 0-dimensional ones are the scalars of
assignments such as ``x[i] = 0``, which need no copy), and ``Tensor.tolist``/``numpy``, which
read CPU tensors without dispatching anything and are therefore watched directly.
"""

import traceback
from pathlib import Path
from typing import Any, List, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

aten = torch.ops.aten
# Operations whose boolean (mask) indices are turned into positions with ``nonzero``.
INDEXING = {
    aten.index.Tensor,
    aten.index_put.default,
    aten.index_put_.default,
    aten._index_put_impl_.default,
}
# Tensors made from Python data.
FROM_HOST = {aten.lift_fresh.default, aten.lift_fresh_copy.default}
# Reads that dispatch nothing (on the CPU): watched by patching ``torch.Tensor``.
PATCHED = ("tolist", "numpy", "__array__")
PACKAGE = str(Path(__file__).resolve().parents[1])
HERE = str(Path(__file__).resolve())

Signature = Tuple[str, Tuple[Any, ...]]


class HostReads(TorchDispatchMode):
    """Records the operations dispatched while active (``ops``: name and the signature of its
    arguments and outputs) and what a CUDA graph could not capture (``violations``)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: List[Signature] = []
        self.violations: List[str] = []
        self._saved: List[Tuple[str, Any]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        problem = _problem(func, args, kwargs)
        out = func(*args, **kwargs)
        if func in FROM_HOST and isinstance(out, torch.Tensor) and out.dim() > 0:
            problem = "a tensor made from Python data (a host-to-device copy on a GPU)"
        self.ops.append((str(func), _signature((args, kwargs, out))))
        if problem is not None:
            self.flag(f"{problem}: {func}")
        return out

    def flag(self, what: str) -> None:
        self.violations.append(f"{what} at {_caller()}")

    def __enter__(self):
        for name in PATCHED:
            self._saved.append((name, torch.Tensor.__dict__.get(name)))
            setattr(torch.Tensor, name, self._reader(name))
        return super().__enter__()

    def __exit__(self, *exc):
        for name, original in self._saved:
            if original is None:
                delattr(torch.Tensor, name)
            else:
                setattr(torch.Tensor, name, original)
        self._saved = []
        return super().__exit__(*exc)

    def _reader(self, name: str):
        inherited = getattr(torch._C.TensorBase, name, None) or getattr(torch.Tensor, name)
        mode = self

        def read(tensor, *args, **kwargs):
            mode.flag(f"a value read back to the host: Tensor.{name}()")
            return inherited(tensor, *args, **kwargs)

        return read


def _problem(func, args, kwargs) -> Optional[str]:
    tags = func.tags
    if func in INDEXING:
        indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
        if any(
            isinstance(index, torch.Tensor) and index.dtype in (torch.bool, torch.uint8)
            for index in indices or ()
        ):
            return "boolean-mask indexing (a data-dependent size)"
        return None
    if torch.Tag.dynamic_output_shape in tags:
        return "an output whose size depends on values"
    if torch.Tag.data_dependent_output in tags or func is aten.is_nonzero.default:
        return "a value read back to the host"
    return None


def _signature(value: Any) -> Tuple[Any, ...]:
    """What an operation's arguments and outputs look like: tensors by shape, dtype and
    device; other values as they are (a size that depends on the data shows there too)."""
    out: List[Any] = []
    for leaf in tree_leaves(value):
        if isinstance(leaf, torch.Tensor):
            out.append((tuple(leaf.shape), str(leaf.dtype), leaf.device.type))
        elif isinstance(leaf, (int, float, bool, str, type(None))):
            out.append(leaf)
        else:
            out.append(type(leaf).__name__)
    return tuple(out)


def _caller() -> str:
    """The innermost line of the project's own code (not this file) on the stack."""
    for frame in reversed(traceback.extract_stack()):
        if frame.filename.startswith(PACKAGE) and frame.filename != HERE:
            return f"{Path(frame.filename).relative_to(Path(PACKAGE).parent)}:{frame.lineno}"
    return "?"


def first_difference(first: List[Signature], second: List[Signature]) -> Optional[str]:
    """Where two records of the same region differ (None: the same operations, in the same
    order, on the same shapes)."""
    for index, (a, b) in enumerate(zip(first, second)):
        if a != b:
            return f"operation {index}: {a} against {b}"
    if len(first) != len(second):
        return f"{len(first)} operations against {len(second)}"
    return None
