"""Composition functions: what a REDUCE computes from the two children it joins (and an extra
input: the tracker's state, a node input, a REDUCE type's embedding). One module each, registered
by name (``registry.py``); importing this package registers this package's own:

* ``treelstm`` — eq. 1-3, the binary TreeLSTM (the paper's);
* ``treernn`` — the plain TreeRNN of the SPINN blog post;
* ``grc`` — the gated recursive cell (Ordered Memory, the Beam Tree Cell).

Adding one: docs/design.md, "Adding a composition".
"""

from spinn_core.compositions.base import Composition, LoopComposition
from spinn_core.compositions.registry import (
    CompositionSetting,
    build_composition,
    composition_choice,
    register_composition,
    registered_compositions,
)

# Registered on import (each module registers its class).
from spinn_core.compositions.grc import GRCComposition  # noqa: E402  isort: skip
from spinn_core.compositions.treelstm import TreeLSTMComposition  # noqa: E402  isort: skip
from spinn_core.compositions.treernn import TreeRNNComposition  # noqa: E402  isort: skip

__all__ = [
    "Composition",
    "CompositionSetting",
    "GRCComposition",
    "LoopComposition",
    "TreeLSTMComposition",
    "TreeRNNComposition",
    "build_composition",
    "composition_choice",
    "register_composition",
    "registered_compositions",
]
