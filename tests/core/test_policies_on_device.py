"""Every transition policy on every device and either way through the loop: what a policy
computes on the GPU's path (static shapes: every sentence at every step, ``SpinnParts``) is
what it computes on the CPU's (sparse). Deterministic policies (given trees, greedy, beam
search, the soft stack) give the same trees, sentence vectors and gradients; a sampling
policy's draws on the device, replayed on the CPU, give the same trees, log-probabilities,
entropies, sentence vectors and policy-gradient gradients (REINFORCE's and PPO's);
straight-through Gumbel's forward pass on the device is the CPU's discrete stack on the moves
it drew. Each test runs with the GPU's path forced on the CPU ("cpu-static"), and on CUDA
where a GPU is present.

Float64 on both devices: the two compute the same sums in different orders (cuBLAS against
the CPU's BLAS), so values agree to ~1e-15 relative after the ~200 dependent steps of a
100-word sentence; 1e-9 claims equality while leaving room for that."""

import copy
import random
from typing import Dict

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.policies import (
    BeamSearch,
    Given,
    Greedy,
    Mixed,
    Replayed,
    Sampled,
    SoftStrengths,
    StraightThroughGumbel,
)
from spinn_core.policy_gradient_losses import clipped_policy_loss, policy_gradient_loss
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch

EXACT = dict(atol=1e-9, rtol=0.0)
LENGTHS = [1, 2, 5, 0, 17, 40, 3, 100, 17]
# The parts a pass moves between rows or steps: the tracker's state, the stack summaries'
# pointers, the REDUCE types (a beam reorders all three).
MODELS = {
    "tracker": {},
    "summaries": {"summary_dim": 3},
    "typed_reduce": {"num_reduce_types": 3},
}


TARGETS = [
    pytest.param("cpu-static", id="cpu-static"),
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
    ),
]


@pytest.fixture(params=TARGETS)
def device(request):
    """The GPU's path: on CUDA, or forced on the CPU ("cpu-static")."""
    return request.param


def cpu_and_device(device, seed=0, **options):
    """The same parser model and batch on the CPU's path and on ``device`` (float64;
    "cpu-static": the CPU with static shapes, the GPU's path)."""
    torch.manual_seed(seed)
    model = Spinn(5, 4, tracking_dim=3, predict_transitions=True, **options).double()
    with torch.no_grad():  # larger weights: choices far from ties, and not all alike
        for parameter in model.parameters():
            parameter.mul_(2.0)
    inputs, mask, transitions = make_batch(LENGTHS, 5, random.Random(seed), "cpu", torch.float64)
    model.static_shapes = False
    on_device = copy.deepcopy(model)
    on_device.static_shapes = True
    device = torch.device("cpu" if device == "cpu-static" else device)
    on_device.to(device)
    return (model, inputs, mask, transitions), (
        on_device,
        inputs.to(device),
        mask.to(device),
        transitions.to(device),
    )


def gradients(model) -> Dict[str, torch.Tensor]:
    return {
        name: parameter.grad.detach().cpu()
        for name, parameter in model.named_parameters()
        if parameter.grad is not None
    }


def assert_same_gradients(cpu_model, device_model):
    expected, got = gradients(cpu_model), gradients(device_model)
    assert expected.keys() == got.keys() and expected
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], **EXACT, msg=name)


def assert_valid_trees(transitions):
    for row, n in zip(transitions.tolist(), LENGTHS):
        steps = [t for t in row if t != tr.PAD]
        assert tr.is_valid(steps, n) if n else steps == []


def assert_same_pass(cpu_out, device_out):
    assert torch.equal(device_out.transitions.cpu(), cpu_out.transitions)
    torch.testing.assert_close(device_out.sentence.cpu(), cpu_out.sentence, **EXACT)
    for field in ("transition_logits", "action_log_probs", "action_entropy", "reduce_strengths"):
        expected, got = getattr(cpu_out, field), getattr(device_out, field)
        assert (expected is None) == (got is None), field
        if expected is not None:
            torch.testing.assert_close(got.cpu(), expected, **EXACT, msg=field)
    if cpu_out.reduce_types is not None:
        assert torch.equal(device_out.reduce_types.cpu(), cpu_out.reduce_types)


DETERMINISTIC = {
    "given": lambda: Given(),
    "greedy": lambda: Greedy(),
    "soft": lambda: SoftStrengths(),
    "soft_cold": lambda: SoftStrengths(temperature=0.5),
}


# The soft stack has no stack summaries or typed REDUCE (rules.check_policy says so).
DETERMINISTIC_CASES = [
    (policy, variant)
    for policy in sorted(DETERMINISTIC)
    for variant in sorted(MODELS)
    if not (policy.startswith("soft") and variant != "tracker")
]


@pytest.mark.parametrize("policy, variant", DETERMINISTIC_CASES)
def test_deterministic_policies_compute_the_same_on_the_device(policy, variant, device):
    (cpu_model, *cpu_batch), (device_model, *device_batch) = cpu_and_device(
        device, **MODELS[variant]
    )
    outputs = []
    for model, (inputs, mask, transitions) in (
        (cpu_model, cpu_batch),
        (device_model, device_batch),
    ):
        given = transitions if policy == "given" else None
        out = model(inputs, mask, given, policy=DETERMINISTIC[policy]())
        out.sentence.pow(2).sum().backward()
        outputs.append(out)
    assert_valid_trees(outputs[1].transitions.cpu())
    assert_same_pass(*outputs)
    assert_same_gradients(cpu_model, device_model)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_beam_search_finds_the_same_trees_on_the_device(variant, device):
    (cpu_model, *cpu_batch), (device_model, *device_batch) = cpu_and_device(
        device, **MODELS[variant]
    )
    outputs = []
    for model, (inputs, mask, _) in ((cpu_model, cpu_batch), (device_model, device_batch)):
        # cuDNN's RNN has no backward in eval mode (the stack summaries' LSTM; the forward pass
        # picks the kernel, so it is switched off for both); PyTorch's own CUDA kernels have one.
        with torch.backends.cudnn.flags(enabled=False):
            out = model.eval()(inputs, mask, policy=BeamSearch(3))
            out.sentence.pow(2).sum().backward()
        outputs.append(out)
    cpu_out, device_out = outputs
    assert_valid_trees(device_out.transitions.cpu())
    assert_same_pass(cpu_out, device_out)
    torch.testing.assert_close(device_out.beam_log_probs.cpu(), cpu_out.beam_log_probs, **EXACT)
    assert_same_gradients(cpu_model, device_model)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_sampled_trees_replayed_on_the_cpu_give_the_same_policy_gradients(variant, device):
    """REINFORCE on the device: the trees drawn there, replayed on the CPU, have the same
    log-probabilities and entropies, and the surrogate loss (with the task's own gradient
    through the sentence vectors) the same gradients."""
    (cpu_model, *cpu_batch), (device_model, *device_batch) = cpu_and_device(
        device, **MODELS[variant]
    )
    reward = torch.linspace(-1.0, 2.0, len(LENGTHS), dtype=torch.float64)
    sampling = Sampled(record=True)
    torch.manual_seed(3)
    outputs = []
    for model, (inputs, mask, _) in ((device_model, device_batch), (cpu_model, cpu_batch)):
        # The device samples first; the CPU then replays what it drew.
        policy = sampling if model is device_model else Replayed([d.cpu() for d in sampling.draws])
        out = model(inputs, mask, policy=policy)
        on = out.sentence.device
        loss = policy_gradient_loss(
            out.action_log_probs.sum(dim=1),
            reward.to(on),
            torch.zeros_like(reward).to(on),
            entropy=out.action_entropy.sum(dim=1),
            entropy_weight=0.1,
        )
        (loss + out.sentence.pow(2).sum()).backward()
        outputs.append(out)
    device_out, cpu_out = outputs
    assert sampling.draws, "the sampling pass drew no move"
    assert all(draw.device == device_batch[0].device for draw in sampling.draws)
    assert_valid_trees(device_out.transitions.cpu())
    assert_same_pass(cpu_out, device_out)
    assert_same_gradients(cpu_model, device_model)


def test_ppo_replays_compute_the_same_on_the_device(device):
    """PPO's further updates: after the parser has changed, the clipped surrogate of the trees
    drawn earlier has the same value and gradients on the device as on the CPU."""
    (cpu_model, *cpu_batch), (device_model, *device_batch) = cpu_and_device(device)
    sampling = Sampled(record=True)
    torch.manual_seed(4)
    with torch.no_grad():
        drawn = device_model(device_batch[0], device_batch[1], policy=sampling)
    old_log_probs = drawn.action_log_probs.sum(dim=1).cpu()
    for model in (cpu_model, device_model):  # the same update on both
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if name.startswith("tracker"):
                    parameter.add_(0.05)
    advantage = torch.linspace(-1.0, 1.0, len(LENGTHS), dtype=torch.float64)
    losses = []
    for model, (inputs, mask, _) in ((cpu_model, cpu_batch), (device_model, device_batch)):
        on = inputs.device
        replayed = model(inputs, mask, policy=Replayed([d.to(on) for d in sampling.draws]))
        assert torch.equal(replayed.transitions.cpu(), drawn.transitions.cpu())
        loss = clipped_policy_loss(
            replayed.action_log_probs.sum(dim=1), old_log_probs.to(on), advantage.to(on)
        )
        loss.backward()
        losses.append(loss.detach().cpu())
        ratio = (replayed.action_log_probs.sum(dim=1).detach().cpu() - old_log_probs).exp()
    # The update moved some ratios past the clip and left others inside: both branches ran.
    outside = (ratio - 1).abs() > 0.2
    assert bool(outside.any()) and not bool(outside.all()), ratio
    torch.testing.assert_close(losses[1], losses[0], **EXACT)
    assert_same_gradients(cpu_model, device_model)


def test_straight_through_gumbel_on_the_device_is_the_cpus_discrete_stack(device):
    (cpu_model, *cpu_batch), (device_model, *device_batch) = cpu_and_device(device)
    torch.manual_seed(5)
    drawn = device_model(
        device_batch[0], device_batch[1], policy=StraightThroughGumbel(temperature=0.5)
    )
    drawn.sentence.pow(2).sum().backward()
    transitions = drawn.transitions.cpu()
    assert_valid_trees(transitions)
    assert torch.equal(drawn.reduce_strengths.cpu(), (transitions == tr.REDUCE).double())
    followed = cpu_model(cpu_batch[0], cpu_batch[1], transitions, policy=Given())
    torch.testing.assert_close(drawn.sentence.cpu(), followed.sentence, **EXACT)
    grads = gradients(device_model)
    assert grads and all(bool(torch.isfinite(g).all()) for g in grads.values())
    # The straight-through term carries the parser's gradient: not all zero.
    assert any(float(g.abs().sum()) > 0 for name, g in grads.items() if "transition" in name)


def test_mixed_trees_on_the_device_are_followed_the_same_on_the_cpu(device):
    (cpu_model, *cpu_batch), (device_model, *device_batch) = cpu_and_device(device)
    torch.manual_seed(6)
    mixed = device_model(*device_batch, policy=Mixed(0.5))
    transitions = mixed.transitions.cpu()
    assert_valid_trees(transitions)
    followed = cpu_model(cpu_batch[0], cpu_batch[1], transitions, policy=Given())
    torch.testing.assert_close(mixed.sentence.cpu(), followed.sentence, **EXACT)
