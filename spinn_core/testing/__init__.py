"""Helpers for the core's tests, benchmarks and a user's own tests of the core: the recursive
reference TreeLSTM and SPINN (`reference`), random trees and padded batches (`trees`), float32
tolerances argued from the computation (`tolerances`), saved-tensor accounting (`memory`), host
reads and shape changes of a pass (`static_shapes`), the repository's folders (`paths`), a
transition mode's policy by name (`policies`). Torch alone, like the rest of `spinn_core`."""

from spinn_core.testing.memory import recording_tapes, saved_for_backward_bytes
from spinn_core.testing.paths import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT, load_script
from spinn_core.testing.policies import policy_for_mode
from spinn_core.testing.reference import (
    ReferenceParse,
    recursive_child_sum,
    recursive_encode,
    recursive_tree_lstm,
    recursive_tree_lstm_nodes,
    reference_spinn,
)
from spinn_core.testing.tolerances import (
    LinearMagnitudes,
    gradient_tolerance,
    unit_roundoff,
    value_tolerance,
)
from spinn_core.testing.trees import (
    TreeBatch,
    make_batch,
    pad_batch,
    random_heads,
    random_transitions,
    random_tree,
    random_tree_batch,
    tree_height,
)

__all__ = [
    "recording_tapes",
    "saved_for_backward_bytes",
    "CONFIGS_ROOT",
    "FIXTURES_ROOT",
    "PROJECT_ROOT",
    "load_script",
    "policy_for_mode",
    "ReferenceParse",
    "recursive_child_sum",
    "recursive_encode",
    "reference_spinn",
    "recursive_tree_lstm",
    "recursive_tree_lstm_nodes",
    "LinearMagnitudes",
    "gradient_tolerance",
    "unit_roundoff",
    "value_tolerance",
    "TreeBatch",
    "make_batch",
    "pad_batch",
    "random_heads",
    "random_transitions",
    "random_tree",
    "random_tree_batch",
    "tree_height",
]
