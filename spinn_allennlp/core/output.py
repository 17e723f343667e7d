"""What an encoder pass returns, shared by the thin-stack loop and the level-wise path."""

from dataclasses import dataclass
from typing import Optional

import torch

# Which transitions a pass followed.
GIVEN = "given"  # the transitions passed in (gold parses, or the balanced default tree)
PREDICTED = "predicted"  # the model's own parser, restricted to legal moves
MIXED = "mixed"  # per step, the given transition or (with some probability) its own
MODES = (GIVEN, PREDICTED, MIXED)


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
    # Which transitions were followed: GIVEN, PREDICTED or MIXED.
    mode: str = GIVEN
