"""Very long inputs through every variant, forward and backward, at a small width (the D = 300
figures are `benchmarks/long_inputs.py`): a 1,000-word sentence with the deepest tree there is,
and a batch of 10,000 one-word sentences. Python's recursion limit stays at its default."""

import pytest
import torch

from spinn_core.spinn import Spinn
from spinn_core.testing import policy_for_mode, saved_for_backward_bytes
from spinn_core.transitions import (
    SHIFT,
    right_branching_transitions,
    transitions_to_string,
)

VARIANTS = {
    "PI-NT level-wise": (dict(), "given"),
    "PI-NT thin stack": (dict(levelwise=False), "given"),
    "PI": (dict(tracking_dim=6), "given"),
    "SPINN given": (dict(tracking_dim=6, predict_transitions=True), "given"),
    "SPINN predicted": (dict(tracking_dim=6, predict_transitions=True), "predicted"),
}


def step(name, inputs, mask, transitions):
    """Forward and backward; returns the output and the model."""
    options, mode = VARIANTS[name]
    torch.manual_seed(0)
    model = Spinn(8, 10, **options)
    output = model(
        inputs, mask, None if mode == "predicted" else transitions, policy=policy_for_mode(mode)
    )
    output.sentence.sum().backward()
    return output, model


def assert_finite(output, model):
    assert torch.isfinite(output.sentence).all()
    for name, parameter in model.named_parameters():
        assert parameter.grad is None or torch.isfinite(parameter.grad).all(), name


# The tracking variants take 1,999 sequential steps (seconds each): `make robustness`.
SLOW = {"PI", "SPINN given", "SPINN predicted"}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.robustness) if n in SLOW else n for n in VARIANTS],
)
def test_a_1000_word_sentence(name):
    length = 1000
    inputs = torch.randn(1, length, 8)
    mask = torch.ones(1, length, dtype=torch.bool)
    transitions = torch.tensor([right_branching_transitions(length)])
    output, model = step(name, inputs, mask, transitions)
    assert_finite(output, model)
    followed = output.transitions[0].tolist()
    assert followed.count(SHIFT) == length
    # The tree prints, however deep.
    tree = transitions_to_string([str(i) for i in range(length)], followed)
    assert tree.count("(") == length - 1


@pytest.mark.parametrize("name", list(VARIANTS))
def test_10000_one_word_sentences(name):
    count = 10_000
    inputs = torch.randn(count, 1, 8)
    mask = torch.ones(count, 1, dtype=torch.bool)
    transitions = torch.zeros(count, 1, dtype=torch.long)
    output, model = step(name, inputs, mask, transitions)
    assert_finite(output, model)
    assert output.sentence.shape == (count, 10)
    assert (output.transitions == SHIFT).all()


@pytest.mark.parametrize(
    "name", ["PI-NT level-wise", pytest.param("PI", marks=pytest.mark.robustness)]
)
def test_memory_is_linear_up_to_1000_words(name):
    """Each extra word costs the same: the cost per word from 250 to 500 words equals that from
    500 to 1,000 (a stack copied every step would double it)."""

    def saved(length):
        inputs = torch.randn(1, length, 8)
        mask = torch.ones(1, length, dtype=torch.bool)
        transitions = torch.tensor([right_branching_transitions(length)])
        options, mode = VARIANTS[name]
        torch.manual_seed(0)
        model = Spinn(8, 10, **options)
        return saved_for_backward_bytes(
            lambda: model(inputs, mask, transitions, policy=policy_for_mode(mode)).sentence.sum()
        )

    short, middle, long = saved(250), saved(500), saved(1000)
    first, second = (middle - short) / 250, (long - middle) / 500
    assert abs(second / first - 1) < 0.05, (first, second)
