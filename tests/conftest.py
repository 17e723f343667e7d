from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                  reason="no CUDA device")),
]


@pytest.fixture(params=DEVICES)
def device(request):
    return torch.device(request.param)
