"""The fused kernels compiled for the GPU they run on (no interpreter), against the PyTorch step
loop on the same device's static-shape path: the runner picker takes them on CUDA, and they
compute what the loop computes, outputs and every gradient, in float64 (to rounding) and in
float32 with full-precision products (`torch.set_float32_matmul_precision("highest")` for both
paths). Run by benchmarks/gpu_checks.sh in a process of its own: test_fused_thin_stack.py sets
TRITON_INTERPRET for its whole process, and Triton reads it once. Skipped without a GPU (the
same kernels, block sizes and masks run in the interpreter on every CI run)."""

import os
import random

import pytest
import torch

from spinn_core.fused import launches, run_fused_thin_stack
from spinn_core.policies import Given, Greedy
from spinn_core.runners.thin_stack import run_thin_stack
from spinn_core.spinn import Spinn, pick_runner
from spinn_core.testing import make_batch

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"),
    reason="needs a CUDA device and Triton's compiler (not its interpreter)",
)
PARSER = dict(tracking_dim=61, predict_transitions=True)
# name -> (options, policy, lengths): the paper's sizes (D = 300), 64 sentences of 0-30 words.
LENGTHS = [(7 * i) % 31 for i in range(64)]
CASES = {
    "pi_nt": (dict(levelwise=False), Given),
    "pi": (dict(tracking_dim=61), Given),
    "spinn_teacher_forced": (PARSER, Given),
    "spinn_greedy": (PARSER, Greedy),
}


def passes(name, dtype):
    options, policy = CASES[name]
    torch.manual_seed(0)
    model = Spinn(300, 300, **options).to("cuda", dtype)
    inputs, mask, transitions = make_batch(LENGTHS, 300, random.Random(0), "cuda", dtype)
    inputs.requires_grad_(True)
    results = []
    for runner in (run_thin_stack, run_fused_thin_stack):
        model.zero_grad()
        inputs.grad = None
        given = transitions if policy.follows_given else None
        out = model(inputs, mask, given, policy=policy(), runner=runner)
        loss = out.sentence.square().sum()
        if out.transition_logits is not None:
            loss = loss + out.transition_logits.square().sum()
        loss.backward()
        grads = [inputs.grad.clone()] + [p.grad.clone() for p in model.parameters()]
        results.append((out, grads))
    return model, results


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_fused_pass_equals_the_step_loop_float64(name):
    _, ((loop, loop_grads), (fused, fused_grads)) = passes(name, torch.float64)
    assert torch.equal(loop.transitions, fused.transitions)
    torch.testing.assert_close(fused.sentence, loop.sentence, rtol=0, atol=1e-10)
    for want, got in zip(loop_grads, fused_grads):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_fused_pass_is_within_float32_rounding(name):
    """float32, both paths' products in full precision: sentence vectors within 1e-4 (a
    TreeLSTM's values are bounded by 1 and the products sum ~700 terms of ~1e-3 rounding
    each over at most 30 levels; the interpreter tests argue the bound in full), the same
    greedy moves on this untrained parser (margins far above that)."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        _, ((loop, _), (fused, _)) = passes(name, torch.float32)
    finally:
        torch.set_float32_matmul_precision(previous)
    assert torch.equal(loop.transitions, fused.transitions)
    torch.testing.assert_close(fused.sentence, loop.sentence, rtol=0, atol=1e-4)


def test_cuda_the_picker_takes_the_kernels_at_two_launches_a_step():
    model = Spinn(300, 300, **PARSER).cuda()
    inputs, mask, _ = make_batch([30] * 8, 300, random.Random(0), "cuda")
    assert pick_runner(Greedy(), model.parts(), model.levelwise, inputs) is run_fused_thin_stack
    with torch.no_grad():
        model(inputs, mask, policy=Greedy())
        launches.reset()
        model(inputs, mask, policy=Greedy())
    assert launches.total == 2 * (2 * 30 - 1)
