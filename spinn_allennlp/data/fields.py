"""Fields for trees."""

from typing import Sequence

import torch
from allennlp.data.fields import TensorField

from spinn_core.transitions import PAD


def transitions_field(transitions: Sequence[int]) -> TensorField:
    """A sentence's SHIFT (0) / REDUCE (1) sequence as a field that batches into a
    ``(batch_size, max_steps)`` long tensor padded with PAD (-1): what the SPINN encoder takes
    as ``transitions``."""
    return TensorField(torch.tensor(list(transitions), dtype=torch.long), padding_value=PAD)
