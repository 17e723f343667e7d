"""The length buckets of the CUDA graphs (``graphs.py``): the shapes a batch is padded to, so
that a handful of captured graphs serve a whole epoch.

A batch's longest sentence is padded to the next of :data:`LENGTH_BUCKETS` (:func:`bucket_size`),
its number of sentences to the configured batch size or the next power of two
(:func:`batch_bucket`), and each input tensor to those sizes (:func:`pad_dims`): padded
sentences are empty and padded steps PAD, so padding changes no output and no gradient
(``tests/core/test_buckets.py``).
"""

from typing import Optional, Sequence, Union

import torch

# The length edges: a batch's longest sentence is padded to the first edge at least as long
# (past the first edge, at most half again as many steps, a fifth on average over uniform
# lengths; below it, up to the first edge's 8 words).
LENGTH_BUCKETS = (8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


def bucket_size(value: int, sizes: Sequence[int]) -> Optional[int]:
    """The smallest of ``sizes`` at least ``value``; None when ``value`` is past the largest."""
    fitting = [size for size in sizes if size >= value]
    return min(fitting) if fitting else None


def pad_dims(
    tensor: torch.Tensor, sizes: Sequence[int], value: Union[int, float, bool]
) -> torch.Tensor:
    """``tensor`` padded with ``value`` (or cut) to ``sizes`` in its leading dimensions."""
    for dim, size in enumerate(sizes):
        if tensor.size(dim) > size:
            tensor = tensor.narrow(dim, 0, size)
        elif tensor.size(dim) < size:
            shape = list(tensor.shape)
            shape[dim] = size - tensor.size(dim)
            tensor = torch.cat([tensor, tensor.new_full(shape, value)], dim=dim)
    return tensor


def batch_bucket(batch_size: int) -> int:
    """The number of sentences a batch of ``batch_size`` is padded to when no batch size is
    configured: the next power of two, at least 8."""
    return max(8, 1 << (batch_size - 1).bit_length())
