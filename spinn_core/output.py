"""What an encoder pass returns, whichever runner made it."""

from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from spinn_core.transitions import PAD


class Mode(str, Enum):
    """Which transitions a pass followed (the policy's kind; see ``policies.py``). A ``str``,
    so ``mode == "given"`` and JSON output work as with plain strings."""

    GIVEN = "given"  # the transitions passed in (gold parses, or the balanced default tree)
    PREDICTED = "predicted"  # the model's own parser (greedy or beam), legal moves only
    MIXED = "mixed"  # per step, the given transition or (with some probability) its own
    SOFT = "soft"  # a soft stack whose strengths are the parser's probabilities
    SAMPLED = "sampled"  # drawn from the parser's distribution over legal moves
    # the soft stack with 0/1 strengths drawn by Gumbel-max, gradients of the Gumbel softmax
    STRAIGHT_THROUGH = "straight_through"
    # a mixture over a beam of the parser's trees (``transitions``: the most probable of them)
    BEAM = "beam"

    def __str__(self) -> str:
        return self.value


GIVEN, PREDICTED, MIXED, SOFT, SAMPLED = (
    Mode.GIVEN,
    Mode.PREDICTED,
    Mode.MIXED,
    Mode.SOFT,
    Mode.SAMPLED,
)


# How a tensor field of SpinnOutput is laid out, declared once with the field (its metadata):
# what `split`, `merge_rows` and the CUDA graphs' cut derive their work from.
ROW = "row"  # (B, ...): one value per sentence
STEP = "step"  # (B, T, ...): one per step
BEAM_STEP = "beam_step"  # (B, K, T): one per step of each of a beam's K parses


def _tensor(layout: str, pad: float = 0.0, parser: bool = False) -> Any:
    """An optional tensor field laid out as ``layout``; ``pad``: the value of steps past a
    sentence's end; ``parser``: the parser's own record of its moves (what a parser with a
    network of its own hands on to the composition's output)."""
    return field(default=None, metadata={"layout": layout, "pad": pad, "parser": parser})


@dataclass
class SpinnOutput:
    """Everything one encoder pass computes; ``B`` sentences, ``T`` steps, ``D`` hidden size."""

    # Shape: (B, D). h of the stack top after the last step; zeros for an empty sentence.
    sentence: torch.Tensor = field(metadata={"layout": ROW, "pad": 0.0})
    # Shape: (B, T). The transitions actually followed, PAD after each sentence's end.
    transitions: torch.Tensor = field(metadata={"layout": STEP, "pad": PAD})
    # Shape: (B, T, 2). SHIFT/REDUCE logits at each step, when the model has a parser.
    transition_logits: Optional[torch.Tensor] = _tensor(STEP, parser=True)
    # Shapes: (B, T, D) h and (B, T, node_dim) full state of the node pushed at each step (the
    # tree's nodes in post-order: leaves at SHIFTs, constituents at REDUCEs), when asked for.
    node_hidden: Optional[torch.Tensor] = _tensor(STEP)
    node_states: Optional[torch.Tensor] = _tensor(STEP)
    # Which transitions were followed: GIVEN, PREDICTED, MIXED, SAMPLED or SOFT (then
    # ``transitions`` is the discrete tree the soft pass prefers).
    mode: str = GIVEN
    # Shape: (B, T). Soft mode: the strength of REDUCE at each step after the legal-move rule
    # (0 after the sentence's end).
    reduce_strengths: Optional[torch.Tensor] = _tensor(STEP)
    # Typed REDUCE (NSHRDLU §3.3). Shape (B, T): the type of each REDUCE followed (PAD = -1 at
    # SHIFTs and after the end); shape (B, T, K): the type classifier's logits at every step.
    reduce_types: Optional[torch.Tensor] = _tensor(STEP, pad=PAD)
    reduce_type_logits: Optional[torch.Tensor] = _tensor(STEP)
    # Shape: (B, T). A policy that chooses by a distribution over legal moves (sampling):
    # the log-probability of the transition taken at each step and the entropy of the
    # distribution it was taken from; 0 where only one move was legal and after the end.
    # Summed over steps, the log-probability of the whole tree (REINFORCE's score function).
    action_log_probs: Optional[torch.Tensor] = _tensor(STEP, parser=True)
    action_entropy: Optional[torch.Tensor] = _tensor(STEP, parser=True)
    # Shape: (B,). Beam search (``runners/beam.py``): the log-probability under the parser of
    # each tree found (0 for an empty sentence).
    beam_log_probs: Optional[torch.Tensor] = _tensor(ROW, parser=True)
    # Shapes: (B, K) and (B, K, T). A beam mixture (``runners/beam.py``): the summed
    # log-probability of each of the K parses kept (-inf for a slot no parse filled; with
    # gradients) and their transitions, best first; the sentence vector is their roots
    # weighted by the softmax of the scores.
    beam_scores: Optional[torch.Tensor] = _tensor(ROW)
    beam_transitions: Optional[torch.Tensor] = _tensor(BEAM_STEP, pad=PAD)
    # Shape: (B, K, D). The K parses' roots, when the beam mixes predictions (a model
    # classifies each and mixes the results with the scores' softmax).
    beam_roots: Optional[torch.Tensor] = _tensor(ROW)
    # A beam mixture's ``mix`` ("roots", "predictions", "best_tree"): how a model that reads
    # ``beam_roots`` classifies and trains on them; None for any other policy.
    beam_mix: Optional[str] = None

    def split(self, sizes: Sequence[int]) -> List["SpinnOutput"]:
        """The outputs of consecutive groups of ``sizes`` sentences (e.g. premises, then
        hypotheses, encoded in one call), each cut to its own number of steps: what encoding
        each group alone returns (the step columns past a group's longest sentence are PAD)."""
        outputs = []
        start = 0
        for size in sizes:
            rows = slice(start, start + size)
            start += size
            followed = self.transitions[rows]
            steps = int((followed != PAD).sum(dim=1).max()) if size else 0
            cut: Dict[str, Any] = {
                name: _take(getattr(self, name), layout, rows, steps)
                for name, layout in LAYOUT.items()
            }
            outputs.append(replace(self, **cut))
        return outputs


# Every tensor field's layout, in declaration order; the per-step ones; the parser's own.
LAYOUT: Dict[str, str] = {f.name: f.metadata["layout"] for f in fields(SpinnOutput) if f.metadata}
PADDING: Dict[str, float] = {f.name: f.metadata["pad"] for f in fields(SpinnOutput) if f.metadata}
STEP_FIELDS: Tuple[str, ...] = tuple(name for name, layout in LAYOUT.items() if layout == STEP)
PARSER_FIELDS: Tuple[str, ...] = tuple(
    f.name for f in fields(SpinnOutput) if f.metadata.get("parser")
)


def _take(
    value: Optional[torch.Tensor], layout: str, rows: slice, steps: int
) -> Optional[torch.Tensor]:
    """``value``'s sentences ``rows``, cut to ``steps`` steps."""
    if value is None:
        return None
    if layout == STEP:
        return value[rows, :steps]
    if layout == BEAM_STEP:
        return value[rows, :, :steps]
    return value[rows]


def merge_rows(
    outputs: Sequence[SpinnOutput], rows: Sequence[torch.Tensor], batch_size: int
) -> SpinnOutput:
    """One output of ``batch_size`` sentences from the outputs of groups of them encoded apart
    (``rows[i]``: the batch positions of ``outputs[i]``'s sentences), the inverse of
    ``split``: per-step tensors padded to the longest group's steps with the field's padding
    (PAD for transitions and types, 0 for the rest). A field missing from a group is missing
    from the result. The mode and the beam's mix are the first group's."""
    steps = max(output.transitions.size(1) for output in outputs)
    merged: Dict[str, Optional[torch.Tensor]] = {}
    for name, layout in LAYOUT.items():
        parts = [getattr(output, name) for output in outputs]
        if any(part is None for part in parts):
            merged[name] = None
            continue
        first = parts[0]
        if layout == STEP:
            shape = (batch_size, steps) + tuple(first.shape[2:])
        elif layout == BEAM_STEP:
            shape = (batch_size, first.size(1), steps)
        else:
            shape = (batch_size,) + tuple(first.shape[1:])
        result = first.new_full(shape, PADDING[name])
        for part, index in zip(parts, rows):
            if layout == STEP:
                result[index, : part.size(1)] = part
            elif layout == BEAM_STEP:
                result[index, :, : part.size(2)] = part
            else:
                result[index] = part
        merged[name] = result
    sentence, transitions = merged.pop("sentence"), merged.pop("transitions")
    assert sentence is not None and transitions is not None
    first = outputs[0]
    return SpinnOutput(
        sentence=sentence,
        transitions=transitions,
        mode=first.mode,
        beam_mix=first.beam_mix,
        **merged,
    )
