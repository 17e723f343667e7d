"""bf16 autocast through the encoder (the GPU's mixed precision; CPU autocast supports bf16 too,
so the same code path runs here): the tape keeps node states in the inputs' float32, matrix
products run in bf16, and the result stays within a stated tolerance of float32."""

import random

import pytest
import torch

from spinn_core.policies import Given, Greedy
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch, tree_height, unit_roundoff

VARIANTS = {
    "pi_nt_levelwise": dict(tracking_dim=0),
    "pi_nt_sequential": dict(tracking_dim=0, levelwise=False),
    "pi": dict(tracking_dim=8),
    "spinn": dict(tracking_dim=8, predict_transitions=True),
}
BF16 = unit_roundoff(torch.bfloat16)  # 2^-8: bf16 keeps 8 significant bits


def tolerance(reference: torch.Tensor) -> torch.Tensor:
    """Per element: 8u (1 + |reference|), u = 2^-8.

    Under autocast a composition rounds the operands of its matrix product to bf16 (relative
    error <= 2u on every product; the sums accumulate in float32), its gate pre-activations to
    bf16 (u) and the outputs of its sigmoid and tanh (u each, on values of size <= 1): about
    5u of new error on O(1) quantities per node, i.e. 5u (1 + |c|) on c and h. The error it
    inherits from its children is multiplied by forget gates < 1, and bf16 roundings are as
    likely up as down, so along these trees errors do not compound to the worst case (which
    grows with the tree's height); 8u leaves room for the tracker's cell, which rounds as
    often per step. A stated tolerance, not a rigorous bound. Observed here (D = 24, trees of
    height <= 25, batch norm on the projection): <= 2.6u (1 + |reference|) on node states,
    <= 2.2u in gradient norm (training mode; 1.5u and 1.9u in evaluation mode). What
    it catches: a path that breaks under autocast (dtype mismatches, a float16 cast, a wrong
    or missing cast back), not the difference between keeping the tape in float32 or bf16,
    which measured 1.2u against 1.5u."""
    return 8 * BF16 * (1 + reference.abs())


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_bf16_autocast_is_within_tolerance_of_float32(variant, device):
    torch.manual_seed(0)
    rng = random.Random(8)
    model = Spinn(24, 24, projection_batch_norm=True, **VARIANTS[variant]).to(device)
    lengths = [30, 4, 17, 1, 25, 9]
    inputs, mask, transitions = make_batch(lengths, 24, rng, device)
    assert max(tree_height(row) for row in transitions.tolist()) <= 25
    for train in (False, True):
        model.train(train)
        model.zero_grad()
        reference = model(inputs, mask, transitions, policy=Given(), return_nodes=True)
        loss = reference.sentence.pow(2).sum()
        loss.backward()
        reference_grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        model.zero_grad()
        with torch.autocast(device.type, dtype=torch.bfloat16):
            out = model(inputs, mask, transitions, policy=Given(), return_nodes=True)
            bf16_loss = out.sentence.pow(2).sum()
        bf16_loss.backward()
        # The tape holds float32 node states: what comes out of it is float32.
        assert out.sentence.dtype == out.node_states.dtype == torch.float32
        for name in ("sentence", "node_states"):
            expected = getattr(reference, name).detach()
            error = (getattr(out, name).detach() - expected).abs()
            assert (error <= tolerance(expected)).all(), (name, train, float(error.max()))
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        assert len(grads) == len(reference_grads)
        for grad, expected in zip(grads, reference_grads):
            # A gradient sums one term per node using the parameter; each term carries
            # errors of the same kind as above along its backward path (in norm, same 8u).
            assert grad.dtype == torch.float32
            assert (grad - expected).norm() <= 8 * BF16 * (1 + expected.norm())


def test_bf16_autocast_parses_validly():
    """The parser's logits come out in bf16; its argmax, restricted to legal moves, still
    builds a tree over every word. (Where two logits are within bf16 rounding of each other
    the parse may differ from float32's, so trees are not compared.)"""
    torch.manual_seed(0)
    rng = random.Random(9)
    model = Spinn(12, 12, tracking_dim=6, predict_transitions=True).eval()
    lengths = [12, 1, 7, 30]
    inputs, mask, _ = make_batch(lengths, 12, rng)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(inputs, mask, policy=Greedy())
    for b, n in enumerate(lengths):
        steps = out.transitions[b, : 2 * n - 1].tolist()
        assert steps.count(0) == n and steps.count(1) == n - 1
        depth = 0
        for step in steps:
            depth += 1 if step == 0 else -1
            assert depth >= 1
