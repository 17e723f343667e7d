import math

import pytest
import torch

from spinn_core.output import GIVEN, PREDICTED, SpinnOutput
from spinn_core.supervision import (
    parser_predictions,
    strength_entropy,
    transition_loss,
)
from spinn_core.transitions import PAD, REDUCE, SHIFT

S, R, P = 0, 1, -1


def output(mode, logits, followed):
    return SpinnOutput(
        sentence=torch.zeros(len(followed), 1),
        transitions=torch.tensor(followed),
        transition_logits=torch.tensor(logits, dtype=torch.float64),
        mode=mode,
    )


def test_loss_averages_over_real_steps_only():
    # Sentence 0: 3 steps; sentence 1: 1 step and padding (its logits there must not count).
    logits = [[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[2.0, 0.0], [50.0, -50.0], [9.0, 9.0]]]
    out = output(GIVEN, logits, [[S, S, R], [S, P, P]])
    gold = torch.tensor([[S, S, R], [S, P, P]])
    expected = (3 * math.log(2) + math.log(1 + math.exp(-2))) / 4
    assert transition_loss(out, gold).item() == pytest.approx(expected)
    # Gold wider than the pass (PAD columns beyond the longest sentence) is cut.
    wide = torch.cat([gold, torch.full((2, 2), P)], dim=1)
    assert transition_loss(out, wide).item() == pytest.approx(expected)


def test_loss_is_zero_without_steps_and_refused_without_a_parser():
    out = output(GIVEN, [[[1.0, 2.0]]], [[P]])
    loss = transition_loss(out, torch.tensor([[P]]))
    assert loss.item() == 0.0 and loss.requires_grad is False
    with pytest.raises(ValueError, match="no parser"):
        transition_loss(SpinnOutput(torch.zeros(1, 1), torch.tensor([[S]])), torch.tensor([[S]]))


def test_predictions_are_argmax_when_teacher_forced_and_followed_otherwise():
    logits = [[[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]]
    assert parser_predictions(output(GIVEN, logits, [[S, S, R]])).tolist() == [[R, S, R]]
    assert parser_predictions(output(PREDICTED, logits, [[S, S, R]])).tolist() == [[S, S, R]]


def test_strength_entropy_is_zero_for_clear_choices_and_log_2_for_even_mixes():
    transitions = torch.tensor([[SHIFT, SHIFT, REDUCE], [SHIFT, PAD, PAD]])
    clear = SpinnOutput(
        torch.zeros(2, 3),
        transitions,
        reduce_strengths=torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.5, 0.5]]),
    )
    assert strength_entropy(clear).item() == pytest.approx(0.0, abs=1e-4)
    mixed = SpinnOutput(torch.zeros(2, 3), transitions, reduce_strengths=torch.full((2, 3), 0.5))
    assert strength_entropy(mixed).item() == pytest.approx(math.log(2), abs=1e-6)
    with pytest.raises(ValueError, match="soft-stack"):
        strength_entropy(SpinnOutput(torch.zeros(1, 3), transitions[:1]))
