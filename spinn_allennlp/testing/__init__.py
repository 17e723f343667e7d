"""Helpers for tests, benchmarks and scripts, like `allennlp.common.testing`.

This package and the modules it imports need torch alone (the core's tests and benchmarks run
on machines without AllenNLP). Helpers that need AllenNLP live in their own modules and are
imported explicitly: `spinn_allennlp.testing.cli` (the AllenNLP command line in a subprocess),
`spinn_allennlp.testing.configs` (small-config overrides), and
`spinn_allennlp.testing.model_test_case` (`SpinnModelTestCase`).
"""

from spinn_allennlp.testing.memory import recording_tapes, saved_for_backward_bytes
from spinn_allennlp.testing.paths import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT, load_script
from spinn_allennlp.testing.reference import (
    ReferenceParse,
    recursive_child_sum,
    recursive_encode,
    recursive_tree_lstm,
    recursive_tree_lstm_nodes,
    reference_spinn,
)
from spinn_allennlp.testing.tolerances import (
    LinearMagnitudes,
    gradient_tolerance,
    unit_roundoff,
    value_tolerance,
)
from spinn_allennlp.testing.trees import (
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
