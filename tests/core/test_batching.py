import pytest
import torch

from spinn_core.batch import (
    check_given_transitions,
    checked_mask,
    default_transitions,
    fit_width,
)
from spinn_core.transitions import balanced_transitions

S, R, P = 0, 1, -1


def test_checked_mask_gives_lengths_and_refuses_holes():
    mask, lengths = checked_mask(torch.tensor([[1, 1, 0], [0, 0, 0], [1, 1, 1]]))
    assert mask.dtype == torch.bool and lengths.tolist() == [2, 0, 3]
    with pytest.raises(ValueError, match="mask row 1 has padding before a word"):
        checked_mask(torch.tensor([[1, 0, 0], [0, 1, 1]]))


def test_default_transitions_are_balanced_trees_padded():
    transitions = default_transitions(torch.tensor([3, 0, 1]))
    assert transitions.tolist() == [balanced_transitions(3), [P] * 5, [S, P, P, P, P]]
    assert default_transitions(torch.tensor([], dtype=torch.long)).shape == (0, 0)


def test_check_given_transitions_returns_steps_or_names_the_row():
    lengths = torch.tensor([2, 1])
    steps = check_given_transitions(torch.tensor([[S, S, R], [S, P, P]]), lengths)
    assert steps.tolist() == [3, 1]
    with pytest.raises(ValueError, match="sentence 1 of the batch .* number of SHIFTs"):
        check_given_transitions(torch.tensor([[S, S, R], [S, S, P]]), lengths)
    with pytest.raises(ValueError, match="shape"):
        check_given_transitions(torch.tensor([S, S, R]), lengths)


def test_fit_width_cuts_or_pads():
    transitions = torch.tensor([[S, S, R]])
    assert fit_width(transitions, 2).tolist() == [[S, S]]
    assert fit_width(transitions, 5).tolist() == [[S, S, R, P, P]]
