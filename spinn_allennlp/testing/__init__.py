"""Helpers for a user's own tests, like `allennlp.common.testing`: `SpinnModelTestCase`
(`spinn_allennlp.testing.model_test_case`), and the torch-only helpers of `spinn_core.testing`
re-exported here (the reference TreeLSTM, random trees and batches, argued tolerances). The
repository's own suite helpers (small configs, the command line in a subprocess, hostile
inputs, ...) are lab code in `tools/testing`, not installed.
"""

from spinn_core import testing as _core_testing
from spinn_core.testing import *  # noqa: F401, F403  (the same names, listed once there)

__all__ = list(_core_testing.__all__)
