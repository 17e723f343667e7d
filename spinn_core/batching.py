"""Checks and shapes shared by every batched path (the thin-stack loop and the level-wise one):
the mask rule, the balanced default tree, transition validation and width fitting."""

from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch

from spinn_core.transitions import PAD, REDUCE, SHIFT, balanced_transitions


def checked_mask(mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The mask as bool and each sentence's length.

    Words must come first in each row (as AllenNLP pads): the k-th SHIFT pushes the word at
    position k, and padding positions are never projected, so a mask with holes would read rows
    nobody wrote. Raises ValueError naming the first such row.
    """
    mask = mask.bool()
    lengths = mask.sum(dim=1)
    positions = torch.arange(mask.size(1), device=mask.device).unsqueeze(0)
    left_aligned = positions < lengths.unsqueeze(1)
    bad_rows = (mask != left_aligned).any(dim=1)
    if bool(bad_rows.any()):
        row = int(bad_rows.nonzero()[0])
        raise ValueError(
            f"mask row {row} has padding before a word: {mask[row].int().tolist()}; "
            "real tokens must come first"
        )
    return mask, lengths


def check_word_vectors(inputs: torch.Tensor, mask: torch.Tensor) -> None:
    """Raises ValueError unless ``inputs`` is (B, N, input_dim) for a (B, N) ``mask`` and every
    real word's vector is finite. NaN or inf would spread through every node above the word
    (and, under batch norm, through the whole batch): a clear error here rather than silent
    garbage later. Padding positions are never read, so what they hold doesn't matter."""
    if inputs.dim() != 3 or mask.dim() != 2 or inputs.shape[:2] != mask.shape:
        raise ValueError(
            f"inputs must have shape (batch, words, input_dim) and mask (batch, words); got "
            f"inputs {tuple(inputs.shape)} and mask {tuple(mask.shape)}"
        )
    # A NaN or inf anywhere in a vector makes its sum NaN or inf: one pass over the inputs,
    # and the exact test only for the vectors it flags (a sum may also overflow).
    suspect = mask.bool() & ~torch.isfinite(inputs.sum(dim=-1))
    if not bool(suspect.any()):
        return
    bad = suspect & ~torch.isfinite(inputs).all(dim=-1)
    if bool(bad.any()):
        row, word = (int(x) for x in bad.nonzero()[0])
        raise ValueError(
            f"the vector of word {word} of sentence {row} of the batch is not finite (NaN or "
            f"inf); {int(bad.sum())} real word(s) of the batch are not finite"
        )


def check_transitions_tensor(transitions: torch.Tensor, batch_size: int) -> None:
    """Raises ValueError unless ``transitions`` is an integer (B, T) tensor: a float tensor
    would be truncated silently (0.7 -> SHIFT)."""
    if transitions.dtype.is_floating_point or transitions.dtype.is_complex:
        raise ValueError(f"transitions must be an integer tensor, got {transitions.dtype}")
    if transitions.dim() != 2 or transitions.size(0) != batch_size:
        raise ValueError(
            f"transitions must have shape (batch, steps) with batch {batch_size}, "
            f"got {tuple(transitions.shape)}"
        )


_balanced_cache: Dict[int, List[int]] = {}


def default_transitions(lengths: torch.Tensor) -> torch.Tensor:
    """Shape (B, 2N - 1): the balanced binary tree over each sentence's words, PAD after."""
    sequences = []
    for length in lengths.tolist():
        if length not in _balanced_cache:
            _balanced_cache[length] = balanced_transitions(length)
        sequences.append(_balanced_cache[length])
    width = max((len(s) for s in sequences), default=0)
    padded = [s + [PAD] * (width - len(s)) for s in sequences]
    return torch.tensor(padded, dtype=torch.long, device=lengths.device).view(len(padded), width)


def check_transition_values(transitions: torch.Tensor) -> None:
    """Raises ValueError unless every value is SHIFT, REDUCE or PAD."""
    unknown = (transitions != SHIFT) & (transitions != REDUCE) & (transitions != PAD)
    if bool(unknown.any()):
        row, step = (int(x) for x in unknown.nonzero()[0])
        raise ValueError(
            f"unknown transition value {int(transitions[row, step])} at step {step} of "
            f"sentence {row} of the batch (SHIFT = {SHIFT}, REDUCE = {REDUCE}, PAD = {PAD})"
        )


def check_given_transitions(
    transitions: torch.Tensor, lengths: torch.Tensor, forests: bool = False
) -> torch.Tensor:
    """Checks (batched, on device, one host sync) that each row builds one binary tree over its
    words (with ``forests``, as in the paper's left-padded mode, a stack of trees whose top is
    the sentence) and returns each row's number of steps. Raises ValueError naming the first
    bad row."""
    check_transitions_tensor(transitions, lengths.size(0))
    transitions = transitions.long()
    is_shift = transitions == SHIFT
    is_reduce = transitions == REDUCE
    is_step = is_shift | is_reduce
    num_steps = is_step.sum(dim=1)
    positions = torch.arange(transitions.size(1), device=transitions.device)
    depth = (is_shift.long() - is_reduce.long()).cumsum(dim=1)
    # Each problem as a (B,) mask, those of positions reduced over the row.
    problems = {
        "unknown transition value": (~(is_step | (transitions == PAD))).any(dim=1),
        "PAD before the end": (is_step & (positions.unsqueeze(0) >= num_steps.unsqueeze(1))).any(
            dim=1
        ),
        "REDUCE with fewer than two items on the stack": (is_reduce & (depth < 1)).any(dim=1),
        "number of SHIFTs differs from number of words": is_shift.sum(dim=1) != lengths,
    }
    if not forests and depth.size(1) > 0:
        # Every word shifted but too few REDUCEs: several trees left on the stack, whose top
        # alone would be the sentence (words left out, silently). The stack's final depth says
        # it in two ops (a row whose SHIFTs miss its words is refused above in any case).
        problems[
            "fewer REDUCEs than one tree over the words needs (a forest; the paper's "
            "left-padded mode takes the policy Given(left_padded=True))"
        ] = depth[:, -1] > 1
    bad = torch.stack(list(problems.values()), dim=1)  # (B, problems)
    if bool(bad.any()):
        row, which = (int(x) for x in bad.nonzero()[0])
        reason = list(problems)[which]
        raise ValueError(
            f"invalid given transitions for sentence {row} of the batch ({int(lengths[row])} "
            f"words): {reason}: {transitions[row].tolist()}"
        )
    return num_steps


def fit_width(transitions: torch.Tensor, width: int) -> torch.Tensor:
    """``transitions`` cut or PAD-extended to exactly ``width`` columns."""
    if transitions.size(1) >= width:
        return transitions[:, :width]
    padding = transitions.new_full((transitions.size(0), width - transitions.size(1)), PAD)
    return torch.cat([transitions, padding], dim=1)


def concat_padded(batches: Sequence[torch.Tensor], value: Union[int, float, bool]) -> torch.Tensor:
    """Batches of shapes ``(B_i, W_i, ...)`` as one ``(sum B_i, max W_i, ...)`` batch, each
    padded with ``value`` along dim 1: how several sentence batches (premises and hypotheses)
    go through an encoder in one call."""
    width = max(batch.size(1) for batch in batches)
    padded = []
    for batch in batches:
        if batch.size(1) < width:
            shape = (batch.size(0), width - batch.size(1)) + tuple(batch.shape[2:])
            batch = torch.cat([batch, batch.new_full(shape, value)], dim=1)
        padded.append(batch)
    return torch.cat(padded, dim=0)


# Length buckets of the static-shape path (``graphs.py``): a batch's longest sentence is
# padded to the first edge at least as long, so that a handful of shapes serve an epoch
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
