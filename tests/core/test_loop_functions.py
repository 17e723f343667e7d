"""The thin stack's per-pass layers (``Composition.loop``, ``Tracker.loop``): autograd functions
with hand-written backward passes and one weight-gradient product per pass (``LoopLinear``,
``spinn_core/loop_linear.py``). Checked with ``torch.autograd.gradcheck`` in float64 (inputs and
weights), against the plain layers (``forward``: the same function through ordinary autograd),
across blocks of kept rows, with steps whose backward never runs, with a retained graph run
backward twice, and with gradients asked for only some inputs."""

import gc
import random
import weakref

import pytest
import torch
from torch import nn

from spinn_core import loop_linear
from spinn_core.cells import Tracker
from spinn_core.compositions import GRCComposition, TreeLSTMComposition, TreeRNNComposition
from spinn_core.loop_linear import LoopLinear, loop_weights
from spinn_core.output import GIVEN, PREDICTED
from spinn_core.spinn import Spinn
from spinn_core.tape import WriteOnceTape
from spinn_core.testing import make_batch, policy_for_mode

D, E, T, S = 3, 2, 4, 2  # hidden, extra input, tracking and summary sizes


def set_weights(linear, weight, bias):
    """Makes ``linear`` use the tensors ``weight`` and ``bias`` (so gradcheck can vary them)."""
    del linear.weight, linear.bias
    linear.weight, linear.bias = weight, bias


def compose_two_levels(compose, leaves, extra):
    """Two steps of a pass: two parents of leaf pairs, then their parent with an extra input;
    ``compose(children, extra)`` as ``Composition.loop()`` returns it."""
    first = compose(leaves.view(2, 2, -1), extra[:2])
    root = compose(first.unsqueeze(0), extra[2:])
    return torch.cat([first, root])


def composition(extra_dim=E):
    torch.manual_seed(0)
    return TreeLSTMComposition(D, extra_dim=extra_dim).double()


def test_treelstm_loop_gradcheck():
    model = composition()
    weight = model.linear.weight.detach().clone().requires_grad_()
    bias = model.linear.bias.detach().clone().requires_grad_()
    leaves = torch.randn(4, 2 * D, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(3, E, dtype=torch.float64, requires_grad=True)

    def function(weight, bias, leaves, extra):
        set_weights(model.linear, weight, bias)
        return compose_two_levels(model.loop(), leaves, extra)

    assert torch.autograd.gradcheck(function, (weight, bias, leaves, extra))


def test_treelstm_loop_gradcheck_without_extra_input():
    model = composition(extra_dim=0)
    weight = model.linear.weight.detach().clone().requires_grad_()
    bias = model.linear.bias.detach().clone().requires_grad_()
    leaves = torch.randn(4, 2 * D, dtype=torch.float64, requires_grad=True)

    def function(weight, bias, leaves):
        set_weights(model.linear, weight, bias)
        compose = model.loop()
        first = compose(leaves.view(2, 2, -1), None)
        return torch.cat([first, compose(first.unsqueeze(0), None)])

    assert torch.autograd.gradcheck(function, (weight, bias, leaves))


def compose_two_levels_on_tape(compose, leaves, extra):
    """:func:`compose_two_levels` through ``compose.onto`` a write-once tape (what a thin-stack
    step does: the children's rows read, composed and written in one call)."""
    tape = WriteOnceTape(8, leaves.size(1), like=leaves, zero_rows=torch.tensor([0]))
    tape.write(torch.arange(1, 5), leaves)
    compose.onto(tape, torch.arange(1, 5), torch.tensor([5, 6]), extra[:2])
    compose.onto(tape, torch.tensor([5, 6]), torch.tensor([7]), extra[2:])
    return tape.read(torch.arange(5, 8))


def test_treelstm_on_a_tape_gradcheck():
    """The fused step (the tape's read, the composition and the write as one function)."""
    model = composition()
    weight = model.linear.weight.detach().clone().requires_grad_()
    bias = model.linear.bias.detach().clone().requires_grad_()
    leaves = torch.randn(4, 2 * D, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(3, E, dtype=torch.float64, requires_grad=True)

    def function(weight, bias, leaves, extra):
        set_weights(model.linear, weight, bias)
        return compose_two_levels_on_tape(model.loop(), leaves, extra)

    assert torch.autograd.gradcheck(function, (weight, bias, leaves, extra))


@pytest.mark.parametrize("kind", [TreeLSTMComposition, TreeRNNComposition, GRCComposition])
def test_on_a_tape_equals_forward(kind):
    """``onto`` a tape: values and every gradient as the plain composition's (float64)."""
    torch.manual_seed(0)
    model = kind(D, extra_dim=E).double()
    leaves = torch.randn(4, model.node_dim, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(3, E, dtype=torch.float64, requires_grad=True)
    weights = torch.randn(3, model.node_dim, dtype=torch.float64)

    def plain(children, extra):
        return model(children[:, 0], children[:, 1], extra)

    on_tape = compose_two_levels_on_tape(model.loop(), leaves, extra)
    expected = compose_two_levels(plain, leaves, extra)
    torch.testing.assert_close(on_tape, expected, atol=1e-12, rtol=0)
    got = torch.autograd.grad((on_tape * weights).sum(), [leaves, extra, *model.parameters()])
    wanted = torch.autograd.grad((expected * weights).sum(), [leaves, extra, *model.parameters()])
    for a, b in zip(got, wanted):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=0)


@pytest.mark.parametrize("kind", [TreeLSTMComposition, TreeRNNComposition, GRCComposition])
def test_loop_equals_forward(kind):
    """Values and every gradient equal the plain composition's (float64, 1e-12)."""
    torch.manual_seed(0)
    model = kind(D, extra_dim=E).double()
    leaves = torch.randn(4, model.node_dim, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(3, E, dtype=torch.float64, requires_grad=True)
    weights = torch.randn(3, model.node_dim, dtype=torch.float64)

    def plain(children, extra):
        return model(children[:, 0], children[:, 1], extra)

    results = []
    for compose in (model.loop(), plain):
        model.zero_grad()
        out = compose_two_levels(compose, leaves, extra)
        grads = torch.autograd.grad((out * weights).sum(), [leaves, extra, *model.parameters()])
        results.append((out, grads))
    (loop_out, loop_grads), (plain_out, plain_grads) = results
    torch.testing.assert_close(loop_out, plain_out, atol=1e-12, rtol=0)
    for loop_grad, plain_grad in zip(loop_grads, plain_grads):
        torch.testing.assert_close(loop_grad, plain_grad, atol=1e-12, rtol=0)


def tracker_steps(loop, stacks, state, summaries):
    """Three steps of 3, 3 and 2 running sentences (the state sliced to the running ones, as
    the thin stack does); every step's h and c side by side."""
    outputs = []
    for t, k in enumerate((3, 3, 2)):
        state = loop(
            torch.tensor([t, 4, t + 1][:k]),
            stacks[t, :k],
            (state[0][:k], state[1][:k]),
            None if summaries is None else summaries[t, :k],
        )
        outputs.append(torch.cat(state, dim=1))
    return torch.cat(outputs)


def tracker(summary_dim=S):
    torch.manual_seed(0)
    return Tracker(D, T, predict_transitions=False, summary_dim=summary_dim).double()


def tracker_inputs(summary_dim=S):
    generator = torch.Generator().manual_seed(1)

    def tensor(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64).requires_grad_()

    words = tensor(4, D)  # index 4: the empty buffer
    stacks = tensor(3, 3, 2, D)
    state = (tensor(3, T), tensor(3, T))
    summaries = tensor(3, 3, 2 * summary_dim) if summary_dim else None
    return words, stacks, state, summaries


@pytest.mark.parametrize("summary_dim", [S, 0])
def test_tracker_loop_gradcheck(summary_dim):
    model = tracker(summary_dim)
    cell = model.cell
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    params = [getattr(cell, name).detach().clone().requires_grad_() for name in names]
    words, stacks, (h, c), summaries = tracker_inputs(summary_dim)
    inputs = [words, stacks, h, c] + ([summaries] if summaries is not None else [])

    def function(weight_ih, weight_hh, bias_ih, bias_hh, words, stacks, h, c, summaries=None):
        for name, value in zip(names, (weight_ih, weight_hh, bias_ih, bias_hh)):
            delattr(cell, name)
            setattr(cell, name, value)
        return tracker_steps(model.loop(words), stacks, (h, c), summaries)

    assert torch.autograd.gradcheck(function, (*params, *inputs))


def test_tracker_loop_equals_forward():
    """Values and every gradient equal the plain tracker's (float64, 1e-12): the buffer top's
    share of the input product precomputed per word, the empty buffer's a zero input."""
    model = tracker()
    words, stacks, state, summaries = tracker_inputs()

    def plain(buffer_top, stack, state, step_summaries):
        padded = torch.cat([words, words.new_zeros(1, D)])
        (h, c), _ = model(padded[buffer_top], stack[:, 1], stack[:, 0], state, step_summaries)
        return h, c

    leaves = [words, stacks, *state, summaries]
    results = []
    for loop in (model.loop(words), plain):
        out = tracker_steps(loop, stacks, state, summaries)
        weights = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).view_as(out)
        grads = torch.autograd.grad((out * weights).sum(), leaves + list(model.parameters()))
        results.append((out, grads))
    (loop_out, loop_grads), (plain_out, plain_grads) = results
    torch.testing.assert_close(loop_out, plain_out, atol=1e-12, rtol=0)
    for loop_grad, plain_grad in zip(loop_grads, plain_grads):
        torch.testing.assert_close(loop_grad, plain_grad, atol=1e-12, rtol=0)


def many_steps(compose, leaves, extra, unused_steps=()):
    """A chain of 12 steps of 3 rows, each composing the previous step's rows; the outputs of
    ``unused_steps`` are not part of the result (their backward never runs)."""
    nodes, results = leaves, []
    for t in range(12):
        out = compose(torch.stack([nodes, nodes.flip(0)], dim=1), extra[t])
        if t not in unused_steps:
            results.append(out)
            nodes = out
    return torch.cat(results)


@pytest.mark.parametrize("rows", [None, 5, 36])
@pytest.mark.parametrize("unused_steps", [(), (4, 5, 11)])
def test_weight_gradient_over_several_blocks(monkeypatch, rows, unused_steps):
    """Blocks of 7 rows hold 2 steps of 3 (a step never straddles two blocks), after a first
    block of ``rows`` rows (the pass's 36, or fewer: then more blocks follow): the weight
    gradient is the plain one, also when some steps' backward never runs."""
    monkeypatch.setattr(loop_linear, "BLOCK_ROWS", 7)
    model = composition()
    leaves = torch.randn(3, 2 * D, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(12, 3, E, dtype=torch.float64, requires_grad=True)

    def plain(children, extra):
        return model(children[:, 0], children[:, 1], extra)

    grads = []
    for compose in (model.loop(rows), plain):
        model.zero_grad()
        many_steps(compose, leaves, extra, unused_steps).pow(2).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for loop_grad, plain_grad in zip(*grads):
        assert torch.isfinite(loop_grad).all()
        torch.testing.assert_close(loop_grad, plain_grad, atol=1e-12, rtol=0)


def test_retained_graph_backward_twice_doubles_the_gradient():
    model = composition()
    leaves = torch.randn(4, 2 * D, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(3, E, dtype=torch.float64)
    loss = compose_two_levels(model.loop(), leaves, extra).pow(2).sum()
    loss.backward(retain_graph=True)
    once = [p.grad.clone() for p in model.parameters()]
    loss.backward()
    for twice, grad in zip((p.grad for p in model.parameters()), once):
        torch.testing.assert_close(twice, 2 * grad, atol=1e-12, rtol=0)


def test_gradient_of_the_inputs_alone():
    """autograd.grad for the leaves only: the weight-gradient product is not needed, and the
    leaves' gradient equals the plain composition's."""
    model = composition()
    leaves = torch.randn(4, 2 * D, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(3, E, dtype=torch.float64)
    (loop_grad,) = torch.autograd.grad(
        compose_two_levels(model.loop(), leaves, extra).sum(), [leaves]
    )
    plain = compose_two_levels(
        lambda children, e: model(children[:, 0], children[:, 1], e), leaves, extra
    )
    (plain_grad,) = torch.autograd.grad(plain.sum(), [leaves])
    torch.testing.assert_close(loop_grad, plain_grad, atol=1e-12, rtol=0)
    assert all(p.grad is None for p in model.parameters())


def test_nothing_is_kept_without_gradients():
    """Under no_grad (and with frozen weights) a pass keeps no input rows and makes no token."""
    model = composition()
    leaves = torch.randn(4, 2 * D, dtype=torch.float64)
    extra = torch.randn(3, E, dtype=torch.float64)
    with torch.no_grad():
        linear, token = loop_weights(model.linear.weight, model.linear.bias)
    assert token is None and not linear.keeps
    model.requires_grad_(False)
    linear, token = loop_weights(model.linear.weight, model.linear.bias)
    assert token is None and not linear.keeps
    out = compose_two_levels(model.loop(), leaves.requires_grad_(), extra)
    (grad,) = torch.autograd.grad(out.sum(), [leaves])
    assert torch.isfinite(grad).all()


def test_nothing_outlives_a_training_step(monkeypatch):
    """A pass's LoopLinears (and the rows they keep) are freed by reference counting alone
    once the step's outputs are gone: no reference cycle through the autograd graph (see
    ``tape._Table``)."""
    made = []

    class Recorded(LoopLinear):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(weakref.ref(self))

    monkeypatch.setattr(loop_linear, "LoopLinear", Recorded)
    model = Spinn(4, 3, tracking_dim=2, predict_transitions=True)
    inputs, mask, transitions = make_batch([6, 3, 9], 4, random.Random(7), "cpu")
    gc.disable()
    try:
        for mode in (GIVEN, PREDICTED):
            out = model(
                inputs, mask, transitions if mode == GIVEN else None, policy=policy_for_mode(mode)
            )
            (out.sentence.sum() + out.transition_logits.sum()).backward()
            del out
        assert len(made) == 4 and all(ref() is None for ref in made)
    finally:
        gc.enable()


def test_loop_layers_are_plain_modules():
    """The loops add no parameters or buffers: state dicts (and archives) are unchanged."""
    assert list(dict(composition().state_dict())) == ["linear.weight", "linear.bias"]
    assert isinstance(tracker().cell, nn.LSTMCell)
