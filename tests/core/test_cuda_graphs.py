"""CUDA graphs of the encoder's passes (``spinn_core/graphs.py``): replayed passes compute what
eager ones do, outputs and gradients, for every policy a graph can replay; sampling policies draw
what an eager pass of the same bucket draws from the same seed, reproducibly; the memory the
graphs hold is reported; a second pass through one bucket's graph before the first one's
backward pass runs eagerly, and a backward pass after a later replay raises.

On CUDA the graphs are captured and replayed (float64, where the replayed kernels and the
eager ones differ at most in the order of their sums: 1e-9 claims equality). Without a GPU
the same tests run their eager stand-in (the bucketed static-shape pass that the graphs
capture, ``capture=False``), which checks the tests themselves; the tests of what only a
GPU has are skipped."""

import copy
import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.graphs import GraphedPasses, GraphedSpinn
from spinn_core.policies import (
    Given,
    Greedy,
    Mixed,
    Replayed,
    Sampled,
    SoftStrengths,
    StraightThroughGumbel,
)
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device")
EXACT = dict(atol=1e-9, rtol=0.0)
PARSER = dict(tracking_dim=4, predict_transitions=True)
# Two batches of one bucket (8 sentences, 12 words), and one of another (16 words).
BATCHES = ([7, 1, 12, 0, 2, 11, 5], [3, 12, 9, 4, 0, 1, 8], [16, 2, 9])
DETERMINISTIC = {
    "pi_nt_given": (dict(levelwise=False), Given, True),
    "pi_given": (dict(tracking_dim=4), Given, True),
    "spinn_teacher_forced": (PARSER, Given, True),
    "spinn_greedy": (PARSER, Greedy, False),
    "summaries_greedy": (dict(PARSER, summary_dim=3), Greedy, False),
    "typed_reduce_greedy": (dict(PARSER, num_reduce_types=3), Greedy, False),
    "batch_norm_given": (dict(PARSER, projection_batch_norm=True), Given, True),
    "soft_stack": (PARSER, SoftStrengths, False),
}
RANDOM = {
    "sampled": (Sampled, False),
    "mixed": (lambda: Mixed(0.5), True),
    "dropout_sampled": (Sampled, False),
    "straight_through": (lambda: StraightThroughGumbel(0.5), False),
}
TARGETS = [
    pytest.param("cpu", id="cpu-eager-buckets"),
    pytest.param("cuda", id="cuda", marks=needs_cuda),
]


@pytest.fixture(params=TARGETS)
def target(request):
    return request.param


def model_on(target, options, seed=0):
    torch.manual_seed(seed)
    model = Spinn(5, 4, **options).double()
    with torch.no_grad():  # decisive parsers: choices far from ties
        for parameter in model.parameters():
            parameter.mul_(2.0)
    return model.to(target)


def batch_on(target, lengths, seed):
    inputs, mask, transitions = make_batch(lengths, 5, random.Random(seed), target, torch.float64)
    return inputs.requires_grad_(), mask, transitions


class Graphed:
    """Passes through CUDA graphs (on CUDA: the model wrapped in ``GraphedSpinn``), or their
    eager stand-in (elsewhere: the same bucketed pass, not captured)."""

    def __init__(self, model, target):
        self.model = model
        self.graphed = GraphedSpinn(model, batch_size=8) if target == "cuda" else None
        self.passes = (
            None if target == "cuda" else GraphedPasses(model, batch_size=8, capture=False)
        )

    def __call__(self, inputs, mask, transitions, policy):
        if self.graphed is not None:
            return self.graphed(inputs, mask, transitions, policy=policy)
        out = self.passes(inputs, mask, transitions, policy)
        assert out is not None, self.passes.eager
        return out

    @property
    def stats(self):
        return self.passes if self.graphed is None else self.graphed.graphs


def loss_of(out):
    total = 0
    for name in ("sentence", "transition_logits", "reduce_strengths", "action_log_probs"):
        value = getattr(out, name)
        if value is not None:
            weights = torch.linspace(-1.0, 2.0, value.numel(), dtype=value.dtype)
            total = total + (value * weights.to(value.device).view(value.shape)).sum()
    return total


def pass_and_gradients(run, model, inputs, mask, transitions, policy):
    """``run``: a ``Graphed``, a ``GraphedPasses`` or the model itself (an eager pass)."""
    model.zero_grad()
    inputs.grad = None
    if run is model:
        out = model(inputs, mask, transitions, policy=policy)
    else:
        out = run(inputs, mask, transitions, policy)
    loss_of(out).backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    grads["inputs"] = inputs.grad.clone()
    return out, grads


def assert_same(expected, got, expected_grads=None, got_grads=None):
    assert torch.equal(got.transitions, expected.transitions)
    for name in (
        "sentence",
        "transition_logits",
        "reduce_strengths",
        "reduce_type_logits",
        "action_log_probs",
        "action_entropy",
    ):
        a, b = getattr(expected, name), getattr(got, name)
        assert (a is None) == (b is None), name
        if a is not None:
            torch.testing.assert_close(b, a, **EXACT, msg=name)
    if expected_grads is not None:
        assert got_grads.keys() == expected_grads.keys()
        for name, grad in expected_grads.items():
            torch.testing.assert_close(got_grads[name], grad, **EXACT, msg=name)


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_replayed_passes_compute_what_eager_ones_do(name, target):
    """Training passes (forward and backward) of three batches, two of them in one bucket:
    the second replays the first's graph."""
    options, policy, reads_given = DETERMINISTIC[name]
    model = model_on(target, options)
    eager = copy.deepcopy(model)
    graphed = Graphed(model, target)
    for seed, lengths in enumerate(BATCHES):
        inputs, mask, transitions = batch_on(target, lengths, seed)
        given = transitions if reads_given else None
        expected = pass_and_gradients(eager, eager, inputs, mask, given, policy())
        got = pass_and_gradients(graphed, model, inputs, mask, given, policy())
        assert_same(expected[0], got[0], expected[1], got[1])
    if target == "cuda":
        stats = graphed.stats
        assert stats.captures == 2 and stats.replayed == 3 and not stats.eager


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_replayed_evaluation_passes_compute_what_eager_ones_do(name, target):
    options, policy, reads_given = DETERMINISTIC[name]
    model = model_on(target, options).eval()
    eager = copy.deepcopy(model)
    graphed = Graphed(model, target)
    with torch.no_grad():
        for seed, lengths in enumerate(BATCHES):
            inputs, mask, transitions = batch_on(target, lengths, seed)
            given = transitions if reads_given else None
            expected = eager(inputs, mask, given, policy=policy())
            assert_same(expected, graphed(inputs, mask, given, policy()))


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_sampling_policies_draw_what_an_eager_pass_of_the_bucket_draws(name, target):
    """The same seed, the same draws, the same outputs and gradients as the eager pass of the
    same bucket (the same random numbers, consumed in the same order); the trees drawn,
    replayed on the CPU's sparse path, have the same log-probabilities."""
    policy, reads_given = RANDOM[name]
    options = dict(PARSER, projection_dropout=0.3) if name.startswith("dropout") else PARSER
    model = model_on(target, options).train()
    eager = copy.deepcopy(model)
    stand_in = GraphedPasses(eager, batch_size=8, capture=False)
    graphed = Graphed(model, target)
    for seed, lengths in enumerate(BATCHES[:2]):
        inputs, mask, transitions = batch_on(target, lengths, seed)
        given = transitions if reads_given else None
        torch.manual_seed(10 + seed)
        expected = pass_and_gradients(stand_in, eager, inputs, mask, given, policy())
        torch.manual_seed(10 + seed)
        got = pass_and_gradients(graphed, model, inputs, mask, given, policy())
        assert_same(expected[0], got[0], expected[1], got[1])
        drawn = got[0].transitions.cpu()
        for row, n in zip(drawn.tolist(), lengths):
            steps = [move for move in row if move != tr.PAD]
            assert tr.is_valid(steps, n) if n else steps == []
        if name == "sampled":
            cpu = copy.deepcopy(model).cpu()
            cpu.static_shapes = False
            cpu.cuda_graphs = None
            replayed = cpu(inputs.detach().cpu(), mask.cpu(), policy=Replayed(list(drawn.t())))
            torch.testing.assert_close(
                replayed.action_log_probs, got[0].action_log_probs.detach().cpu(), **EXACT
            )


@pytest.mark.parametrize("name", ["sampled", "straight_through"])
def test_sampled_passes_are_reproducible_from_the_seed(name, target):
    policy, _ = RANDOM[name]
    model = model_on(target, PARSER)
    graphed = Graphed(model, target)
    inputs, mask, _ = batch_on(target, BATCHES[0], 0)
    runs = []
    for seed in (3, 3, 4):
        torch.manual_seed(seed)
        with torch.no_grad():
            runs.append(graphed(inputs, mask, None, policy()))
    assert torch.equal(runs[0].transitions, runs[1].transitions)
    assert torch.equal(runs[0].sentence, runs[1].sentence)
    assert not torch.equal(runs[0].transitions, runs[2].transitions)


@needs_cuda
def test_the_memory_the_graphs_hold_is_reported():
    model = model_on("cuda", PARSER)
    graphed = Graphed(model, "cuda")
    inputs, mask, transitions = batch_on("cuda", BATCHES[0], 0)
    loss_of(graphed(inputs, mask, transitions, Given())).backward()
    stats = graphed.stats
    assert stats is not None and stats.captures == 1
    assert stats.memory_bytes > 0
    print(f"graphs of one bucket (8 x 12 words, D = 4) hold {stats.memory_bytes / 2**20:.1f} MiB")


@needs_cuda
def test_a_second_pass_before_the_first_backward_runs_eagerly():
    model = model_on("cuda", PARSER)
    eager = copy.deepcopy(model)
    graphed = Graphed(model, "cuda")
    inputs, mask, transitions = batch_on("cuda", BATCHES[0], 0)
    first = graphed(inputs, mask, transitions, Given())
    second = graphed(inputs, mask, transitions, Given())
    assert graphed.stats.eager == {"a replay's backward pass is still to come": 1}
    (loss_of(first) + 2 * loss_of(second)).backward()
    expected = [eager(inputs, mask, transitions, policy=Given()) for _ in range(2)]
    (loss_of(expected[0]) + 2 * loss_of(expected[1])).backward()
    for (name, parameter), reference in zip(model.named_parameters(), eager.parameters()):
        torch.testing.assert_close(parameter.grad, reference.grad, **EXACT, msg=name)


@needs_cuda
def test_a_backward_pass_after_a_later_replay_raises():
    model = model_on("cuda", PARSER)
    graphed = Graphed(model, "cuda")
    inputs, mask, transitions = batch_on("cuda", BATCHES[0], 0)
    first = loss_of(graphed(inputs, mask, transitions, Given()))
    first.backward(retain_graph=True)
    loss_of(graphed(inputs, mask, transitions, Given())).backward()
    with pytest.raises(RuntimeError, match="replayed again"):
        first.backward()


@needs_cuda
def test_training_steps_through_graphs_match_eager_ones():
    """Three optimiser steps on three batches: the same parameters and running statistics."""
    options = dict(PARSER, projection_batch_norm=True)
    model = model_on("cuda", options).train()
    eager = copy.deepcopy(model)
    graphed = Graphed(model, "cuda")
    optimisers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, model)]
    for seed, lengths in enumerate(BATCHES):
        inputs, mask, transitions = batch_on("cuda", lengths, seed)
        for run, optimiser in zip((eager, graphed), optimisers):
            optimiser.zero_grad()
            out = (
                run(inputs, mask, transitions, Given())
                if run is graphed
                else run(inputs, mask, transitions, policy=Given())
            )
            loss_of(out).backward()
            optimiser.step()
    for (name, a), b in zip(model.state_dict().items(), eager.state_dict().values()):
        torch.testing.assert_close(a, b, **EXACT, msg=name)
