"""Helpers for a user's own tests, like `allennlp.common.testing`: `SpinnModelTestCase`
(`spinn_allennlp.testing.model_test_case`), and the torch-only helpers of `spinn_core.testing`
re-exported here (the reference TreeLSTM, random trees and batches, argued tolerances). The
repository's own suite helpers (small configs, the command line in a subprocess, hostile
inputs, ...) are lab code in `tools/testing`, not installed.
"""

from spinn_core.testing import (
    CONFIGS_ROOT,
    FIXTURES_ROOT,
    PROJECT_ROOT,
    LinearMagnitudes,
    ReferenceParse,
    TreeBatch,
    gradient_tolerance,
    load_script,
    make_batch,
    pad_batch,
    random_heads,
    random_transitions,
    random_tree,
    random_tree_batch,
    recording_tapes,
    recursive_child_sum,
    recursive_encode,
    recursive_tree_lstm,
    recursive_tree_lstm_nodes,
    reference_spinn,
    saved_for_backward_bytes,
    tree_height,
    unit_roundoff,
    value_tolerance,
)

__all__ = [
    "recording_tapes",
    "saved_for_backward_bytes",
    "CONFIGS_ROOT",
    "FIXTURES_ROOT",
    "PROJECT_ROOT",
    "load_script",
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
