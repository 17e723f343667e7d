import os

# The fused GPU kernels (spinn_core/fused) run on CPU tensors in Triton's interpreter, which
# Triton sets up when `triton.language` is first imported (torch may import it early, e.g. for
# its FLOP counter): so before anything else. TRITON_INTERPRET=0 keeps the compiler, for the
# compiled kernels' tests on a GPU (tests/core/test_fused_on_cuda.py, benchmarks/gpu_checks.sh).
os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest
import torch

# The suite's models are tiny: a second thread buys nothing, and on a loaded machine OpenMP's
# thread hand-offs made tiny ops 10-100x slower (an LSTMCell step: 0.05 ms -> 7 ms).
torch.set_num_threads(1)

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
    ),
]


@pytest.fixture(params=DEVICES)
def device(request):
    """Each test taking `device` runs on the CPU, and on CUDA when a GPU is present."""
    return torch.device(request.param)
