"""SpinnOutput's tensor fields declare their layout once; splitting an output by groups of
sentences and merging the groups back gives every field back, the beam's included."""

import dataclasses
import typing

import torch

from spinn_core.output import (
    BEAM_STEP,
    LAYOUT,
    PARSER_FIELDS,
    ROW,
    STEP,
    STEP_FIELDS,
    SpinnOutput,
    merge_rows,
)
from spinn_core.transitions import REDUCE, SHIFT

B, T, K, D = 5, 7, 3, 4


def full_output() -> SpinnOutput:
    """Every tensor field set, every sentence T steps long."""
    generator = torch.Generator().manual_seed(0)
    shapes = {ROW: (B, D), STEP: (B, T, 2), BEAM_STEP: (B, K, T)}
    values = {}
    for name, layout in LAYOUT.items():
        values[name] = torch.randn(shapes[layout], generator=generator, dtype=torch.float64)
    values["transitions"] = torch.tensor([SHIFT, SHIFT] + [REDUCE, SHIFT] * 2 + [REDUCE]).repeat(
        B, 1
    )
    values["beam_scores"] = torch.randn(B, K, generator=generator, dtype=torch.float64)
    values["beam_log_probs"] = torch.randn(B, generator=generator, dtype=torch.float64)
    return SpinnOutput(mode="beam", **values)


def test_every_tensor_field_declares_its_layout():
    hints = typing.get_type_hints(SpinnOutput)
    tensors = {f.name for f in dataclasses.fields(SpinnOutput) if "Tensor" in str(hints[f.name])}
    assert tensors == set(LAYOUT)
    assert set(STEP_FIELDS) < set(LAYOUT) and "transitions" in STEP_FIELDS
    assert set(PARSER_FIELDS) == {
        "transition_logits",
        "action_log_probs",
        "action_entropy",
        "beam_log_probs",
    }


def test_merging_the_split_groups_gives_every_field_back():
    output = full_output()
    groups = output.split([2, 3])
    assert [group.sentence.size(0) for group in groups] == [2, 3]
    rows = [torch.arange(0, 2), torch.arange(2, 5)]
    merged = merge_rows(groups, rows, B)
    for name in LAYOUT:
        assert torch.equal(getattr(merged, name), getattr(output, name)), name
    assert merged.mode == output.mode


def test_merging_interleaved_groups_pads_the_shorter_one():
    """Groups of other lengths, in any rows: a group's steps past its longest sentence are the
    field's padding (PAD for transitions, 0 for logits)."""
    output = full_output()
    short = dataclasses.replace(
        output.split([2, 3])[0],
        transitions=torch.tensor([[SHIFT, SHIFT, REDUCE]] * 2),
        transition_logits=torch.ones(2, 3, 2, dtype=torch.float64),
    )
    long = output.split([2, 3])[1]
    merged = merge_rows([short, long], [torch.tensor([1, 3]), torch.tensor([0, 2, 4])], B)
    assert merged.transitions.shape == (B, T)
    assert torch.equal(merged.transitions[1, 3:], torch.full((T - 3,), -1))
    assert torch.equal(merged.transition_logits[3, 3:], torch.zeros(T - 3, 2, dtype=torch.float64))
    assert torch.equal(merged.transitions[[0, 2, 4]], long.transitions)
    assert torch.equal(merged.beam_transitions[[0, 2, 4]], long.beam_transitions)
