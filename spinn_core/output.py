"""What an encoder pass returns, whichever runner made it."""

from dataclasses import dataclass, replace
from enum import Enum
from typing import List, Optional, Sequence

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
MODES = tuple(Mode)


@dataclass
class SpinnOutput:
    """Everything one encoder pass computes; ``B`` sentences, ``T`` steps, ``D`` hidden size."""

    # Shape: (B, D). h of the stack top after the last step; zeros for an empty sentence.
    sentence: torch.Tensor
    # Shape: (B, T). The transitions actually followed, PAD after each sentence's end.
    transitions: torch.Tensor
    # Shape: (B, T, 2). SHIFT/REDUCE logits at each step, when the model has a parser.
    transition_logits: Optional[torch.Tensor] = None
    # Shapes: (B, T, D) h and (B, T, node_dim) full state of the node pushed at each step (the
    # tree's nodes in post-order: leaves at SHIFTs, constituents at REDUCEs), when asked for.
    node_hidden: Optional[torch.Tensor] = None
    node_states: Optional[torch.Tensor] = None
    # Which transitions were followed: GIVEN, PREDICTED, MIXED, SAMPLED or SOFT (then
    # ``transitions`` is the discrete tree the soft pass prefers).
    mode: str = GIVEN
    # Shape: (B, T). Soft mode: the strength of REDUCE at each step after the legal-move rule
    # (0 after the sentence's end).
    reduce_strengths: Optional[torch.Tensor] = None
    # Typed REDUCE (NSHRDLU §3.3). Shape (B, T): the type of each REDUCE followed (PAD = -1 at
    # SHIFTs and after the end); shape (B, T, K): the type classifier's logits at every step.
    reduce_types: Optional[torch.Tensor] = None
    reduce_type_logits: Optional[torch.Tensor] = None
    # Shape: (B, T). A policy that chooses by a distribution over legal moves (sampling):
    # the log-probability of the transition taken at each step and the entropy of the
    # distribution it was taken from; 0 where only one move was legal and after the end.
    # Summed over steps, the log-probability of the whole tree (REINFORCE's score function).
    action_log_probs: Optional[torch.Tensor] = None
    action_entropy: Optional[torch.Tensor] = None
    # Shape: (B,). Beam search (``runners/beam.py``): the log-probability under the parser of
    # each tree found (0 for an empty sentence).
    beam_log_probs: Optional[torch.Tensor] = None
    # Shapes: (B, K) and (B, K, T). A beam mixture (``runners/beam.py``): the summed
    # log-probability of each of the K parses kept (-inf for a slot no parse filled; with
    # gradients) and their transitions, best first; the sentence vector is their roots
    # weighted by the softmax of the scores.
    beam_scores: Optional[torch.Tensor] = None
    beam_transitions: Optional[torch.Tensor] = None
    # Shape: (B, K, D). The K parses' roots, when the beam mixes predictions (a model
    # classifies each and mixes the results with the scores' softmax).
    beam_roots: Optional[torch.Tensor] = None

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
            outputs.append(
                replace(
                    self,
                    sentence=self.sentence[rows],
                    transitions=followed[:, :steps],
                    transition_logits=_cut(self.transition_logits, rows, steps),
                    node_hidden=_cut(self.node_hidden, rows, steps),
                    node_states=_cut(self.node_states, rows, steps),
                    reduce_strengths=_cut(self.reduce_strengths, rows, steps),
                    reduce_types=_cut(self.reduce_types, rows, steps),
                    reduce_type_logits=_cut(self.reduce_type_logits, rows, steps),
                    action_log_probs=_cut(self.action_log_probs, rows, steps),
                    action_entropy=_cut(self.action_entropy, rows, steps),
                    beam_log_probs=(
                        None if self.beam_log_probs is None else self.beam_log_probs[rows]
                    ),
                    beam_scores=None if self.beam_scores is None else self.beam_scores[rows],
                    beam_transitions=(
                        None
                        if self.beam_transitions is None
                        else self.beam_transitions[rows, :, :steps]
                    ),
                    beam_roots=None if self.beam_roots is None else self.beam_roots[rows],
                )
            )
        return outputs


def _cut(per_step: Optional[torch.Tensor], rows: slice, steps: int) -> Optional[torch.Tensor]:
    return None if per_step is None else per_step[rows, :steps]
