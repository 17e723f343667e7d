"""The one runner picker (`spinn_core.spinn.pick_runner`) and the fused GPU runner: on CUDA's
static-shape path the fused kernels run every pass they implement, any other pass takes the
PyTorch step loop with the reason said once in the log, and the CPU's choices are what they
were. (No GPU here: a stand-in for a CUDA batch, which is all the picker reads of it, and the
refusal's answer given, so that the choice itself is what is tested; the kernels' own checks
and values are tests/core/test_fused_thin_stack.py's.)"""

import logging
from types import SimpleNamespace

import pytest
import torch

import spinn_core.spinn as spinn_module
from spinn_core.fused import run_fused_thin_stack
from spinn_core.policies import BeamSearch, Given, Greedy, Sampled, SoftStrengths
from spinn_core.runners import run_beam, run_levelwise, run_soft_stack, run_thin_stack
from spinn_core.spinn import Spinn, pick_runner

CUDA_BATCH = SimpleNamespace(device=torch.device("cuda"), dtype=torch.float32)
CPU_BATCH = torch.zeros(2, 3, 4)


@pytest.fixture
def refusal(monkeypatch):
    """Sets what `fused_refusal` answers, and records what it was asked."""
    asked = []
    answer = {"reason": None}

    def fake(parts, policy, device, dtype):
        asked.append((type(policy).__name__, device.type))
        return answer["reason"]

    monkeypatch.setattr(spinn_module, "fused_refusal", fake)
    monkeypatch.setattr(spinn_module, "_SAID", set())
    return asked, answer


def test_cuda_passes_the_kernels_implement_take_the_fused_runner(refusal):
    asked, _ = refusal
    full = Spinn(4, 3, tracking_dim=2, predict_transitions=True)
    for policy in (Greedy(), Given()):
        assert pick_runner(policy, full.parts(), full.levelwise, CUDA_BATCH) is run_fused_thin_stack
    # SPINN-PI-NT: level by level by default; the step loop (fused) without it.
    pi_nt = Spinn(4, 3)
    assert pick_runner(Given(), pi_nt.parts(), True, CUDA_BATCH) is run_levelwise
    assert pick_runner(Given(), pi_nt.parts(), False, CUDA_BATCH) is run_fused_thin_stack
    assert asked == [("Greedy", "cuda"), ("Given", "cuda"), ("Given", "cuda")]


def test_a_refused_pass_takes_the_step_loop_and_says_why_once(refusal, caplog):
    _, answer = refusal
    answer["reason"] = "typed REDUCE (reduce_types > 0) is not in the fused kernels"
    model = Spinn(4, 3, tracking_dim=2, predict_transitions=True)
    with caplog.at_level(logging.WARNING, logger="spinn_core.spinn"):
        for _ in range(3):
            assert pick_runner(Greedy(), model.parts(), True, CUDA_BATCH) is run_thin_stack
    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 1 and answer["reason"] in said[0] and "PyTorch step loop" in said[0]


def test_the_cpu_and_the_other_runners_are_chosen_as_before(refusal):
    asked, _ = refusal
    model = Spinn(4, 3, tracking_dim=2, predict_transitions=True)
    parts = model.parts()
    assert pick_runner(Greedy(), parts, True, CPU_BATCH) is run_thin_stack
    assert pick_runner(Sampled(), parts, True, CPU_BATCH) is run_thin_stack
    assert pick_runner(SoftStrengths(), parts, True, CUDA_BATCH) is run_soft_stack
    assert pick_runner(BeamSearch(2), parts, True, CUDA_BATCH) is run_beam
    assert pick_runner(Given(), Spinn(4, 3).parts(), True, CPU_BATCH) is run_levelwise
    # The CPU never asks (its path is the sparse one), nor do the soft stack and the beam.
    assert asked == []
    # Static shapes forced off on CUDA: the sparse loop, never the fused kernels.
    model.static_shapes = False
    assert pick_runner(Greedy(), model.parts(), True, CUDA_BATCH) is run_thin_stack
    assert asked == []
