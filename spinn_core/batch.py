"""One prepared batch: what every runner needs before its first step, made once.

:func:`prepare_batch` checks the inputs (word vectors, mask, transitions, REDUCE types, node inputs)
and decides the number of steps (:func:`check_batch`, which reads values back to the host), then
lays the batch out on its device (:func:`lay_out`, which does not): each sentence's number of steps,
the sentences longest first, and the write-once tape (``tape.WriteOnceTape``) that holds every
node of the pass, with the leaves (the buffer) already written. The thin stack, the level-wise
runner and the soft stack all start from it (``runners/``). A CUDA graph (``graphs.py``) captures
:func:`lay_out` and the runner, after :func:`check_batch` has run.

The tape: sentence ``b`` owns the block of ``R = 1 + N + T`` rows starting at ``base[b]``
(``N`` words and ``T`` steps of the batch's longest):

* ``base[b]`` is a zero node, read wherever there is nothing to read (an empty stack or
  buffer, a PAD step);
* ``base[b] + 1 + j`` is word ``j``, the buffer (rows of padding words are written only by
  the dense leaves of the static-shape path, and never used);
* ``base[b] + 1 + N + t`` is the node made at step ``t`` (a REDUCE writes it; a SHIFT pushes
  a pointer to its word's row instead of copying it).

Blocks are in longest-first order (``base[b] = rank[b] * R``), so a runner that works on the
sentences still running at step t, a prefix of that order, reads and writes a prefix of the
tape.

The module holds, in this order, the checks and shapes every batched path shares and the
prepared batch; the tape's reads and writes are ``tape.py``'s, the CUDA graphs' length buckets
``buckets.py``'s.
"""

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch

from spinn_core.tape import WriteOnceTape
from spinn_core.transitions import PAD, REDUCE, SHIFT, balanced_transitions

# ----------------------------------------------------------------------------------------------
# Checks and shapes shared by every batched path (the thin-stack loop and the level-wise one):
# the mask rule, the balanced default tree, transition validation and width fitting.
# ----------------------------------------------------------------------------------------------


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


# (inputs, mask) -> the node rows of the real words, in mask order (eq. 4's projection); with
# ``dense=True``, of every position, (B * N, node_dim), padding included (see Spinn.leaves).
Leaves = Callable[..., torch.Tensor]


@dataclass
class PreparedBatch:
    """A checked batch of ``B`` sentences of up to ``N`` words, ``T`` steps at most."""

    # Shapes: (B, N, input_dim), (B, N) bool with real words first, (B,).
    inputs: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    # Shape: (B,). The steps each sentence takes: its given transitions' when the policy
    # follows them, 2 * length - 1 otherwise (0 for an empty sentence).
    num_steps: torch.Tensor
    # T: the longest sentence's steps, or more (a length bucket's, see ``graphs.py``).
    total_steps: int
    # Shape: (B, T), long, PAD after each sentence's end: the given transitions (the balanced
    # tree when the policy follows given transitions and none were passed), or None.
    transitions: Optional[torch.Tensor]
    # Shape: (B, T), long: the type of each given REDUCE (-1 elsewhere), or None.
    reduce_types: Optional[torch.Tensor]
    # Shape: (B, T'', node_input_dim), T'' >= T: the input of the node made at each step.
    node_inputs: Optional[torch.Tensor]
    # Whether the output should carry every node's state.
    return_nodes: bool
    # Shape: (B,). Sentence indices longest first (stable), and each sentence's place in it.
    order: torch.Tensor
    rank: torch.Tensor
    # The tape layout (see the module docstring) and the tape, leaves written.
    rows_per_sentence: int
    base: torch.Tensor
    tape: WriteOnceTape
    # Whether every word row was written (dense leaves: no host synchronisation).
    dense: bool = False

    @property
    def batch_size(self) -> int:
        return self.mask.size(0)

    @property
    def max_tokens(self) -> int:
        return self.mask.size(1)

    @property
    def device(self) -> torch.device:
        return self.inputs.device

    def word_rows(self) -> torch.Tensor:
        """Shape (B, N): the tape row of each word (padding words' rows are never used)."""
        return self.base.unsqueeze(1) + 1 + torch.arange(self.max_tokens, device=self.device)

    def step_rows(self) -> torch.Tensor:
        """Shape (B, T): the tape row of the node made at each step."""
        first = self.base + 1 + self.max_tokens
        return first.unsqueeze(1) + torch.arange(self.total_steps, device=self.device)


def check_batch(
    inputs: torch.Tensor,
    mask: torch.Tensor,
    transitions: Optional[torch.Tensor] = None,
    follow_given: bool = True,
    reduce_types: Optional[torch.Tensor] = None,
    node_inputs: Optional[torch.Tensor] = None,
    full_trees: bool = False,
    forests: bool = False,
) -> Tuple[Optional[torch.Tensor], int]:
    """Checks a batch (reading values back to the host) and returns the transitions to lay it
    out with (on the inputs' device; the balanced trees when the policy follows given
    transitions and none were passed) and its number of steps ``T``.

    inputs: (B, N, input_dim) word vectors, finite at real words; mask: (B, N), True on real
    words, which come first in each row. transitions: (B, T') SHIFT/REDUCE/PAD, integer. With
    ``follow_given`` they are the trees to compose over, checked to be binary trees over each
    sentence's words (or the paper's left-padded forests); otherwise they are only checked for
    their values (a mixing policy reads them, a parser's loss scores against them), or, with
    ``full_trees`` (the soft stack's one-hot strengths), to be one tree per sentence, and
    every sentence takes 2N - 1 steps. ``forests``: given transitions may leave a stack of
    trees (the paper's left-padded mode), else each must be one tree. Raises ValueError naming
    the first bad sentence.
    """
    check_word_vectors(inputs, mask)
    device = inputs.device
    mask, lengths = checked_mask(mask)
    batch_size = mask.size(0)
    if transitions is not None:
        check_transitions_tensor(transitions, batch_size)
        # Given transitions may be built elsewhere (e.g. on the CPU): checked and used on the
        # inputs' device, beside the lengths.
        transitions = transitions.to(device)
    if follow_given:
        if transitions is None:
            transitions = default_transitions(lengths)
        num_steps = check_given_transitions(transitions, lengths, forests).to(device)
    else:
        num_steps = (2 * lengths - 1).clamp(min=0)
        if transitions is not None and full_trees:
            given = check_given_transitions(transitions, lengths)
            if bool((given != num_steps).any()):
                raise ValueError("the soft stack follows one tree per sentence: 2N - 1 transitions")
        elif transitions is not None:
            # Any other value would act as a SHIFT unnoticed.
            check_transition_values(transitions)
    total_steps = int(num_steps.max()) if batch_size else 0
    if node_inputs is not None and (node_inputs.dim() != 3 or node_inputs.size(1) < total_steps):
        raise ValueError(
            f"node_inputs must have shape (batch, at least {total_steps} steps, dim), "
            f"got {tuple(node_inputs.shape)}"
        )
    if reduce_types is not None and (reduce_types.dim() != 2 or len(reduce_types) != batch_size):
        raise ValueError(
            f"reduce_types must have shape (batch = {batch_size}, steps), "
            f"got {tuple(reduce_types.shape)}"
        )
    return transitions, total_steps


def lay_out(
    inputs: torch.Tensor,
    mask: torch.Tensor,
    leaves: Leaves,
    node_dim: int,
    total_steps: int,
    transitions: Optional[torch.Tensor] = None,
    follow_given: bool = True,
    reduce_types: Optional[torch.Tensor] = None,
    node_inputs: Optional[torch.Tensor] = None,
    return_nodes: bool = False,
    dense: bool = False,
) -> PreparedBatch:
    """The batch laid out on its device, leaves written, for a batch :func:`check_batch`
    passed (``transitions`` and ``total_steps`` as it returned them; ``total_steps`` may be
    larger, a length bucket's). Reads nothing back to the host when ``dense``: every word
    row of the tape is then written (the projection of every position, padding included), so
    the shapes depend on (B, N, T) alone."""
    device = inputs.device
    mask = mask.bool()
    batch_size, max_tokens = mask.shape
    lengths = mask.sum(dim=1)
    if follow_given:
        assert transitions is not None  # check_batch gives them
        num_steps = (transitions != PAD).sum(dim=1)
    else:
        num_steps = (2 * lengths - 1).clamp(min=0)
    if transitions is not None:
        transitions = fit_width(transitions.long(), total_steps)
    if reduce_types is not None:
        reduce_types = fit_width(reduce_types.long().to(device), total_steps)

    # Longest first, as packed sequences; ties keep their order.
    order = num_steps.argsort(descending=True, stable=True)
    rank = torch.empty_like(order).index_copy_(0, order, torch.arange(batch_size, device=device))
    rows_per_sentence = 1 + max_tokens + total_steps
    base = rank * rows_per_sentence
    tape = WriteOnceTape(batch_size * rows_per_sentence, node_dim, like=inputs, zero_rows=base)
    batch = PreparedBatch(
        inputs=inputs,
        mask=mask,
        lengths=lengths,
        num_steps=num_steps,
        total_steps=total_steps,
        transitions=transitions,
        reduce_types=reduce_types,
        node_inputs=node_inputs,
        return_nodes=return_nodes,
        order=order,
        rank=rank,
        rows_per_sentence=rows_per_sentence,
        base=base,
        tape=tape,
        dense=dense,
    )
    if dense:
        tape.write(batch.word_rows().flatten(), leaves(inputs, mask, dense=True))
    elif batch_size:
        # The buffer, written once; padding words' rows are never read. (Written even when
        # every sentence is empty: the output's zeros are then read from the tape, so they
        # are part of the graph like any other pass's output.)
        tape.write(batch.word_rows()[mask], leaves(inputs, mask))
    return batch


def prepare_batch(
    inputs: torch.Tensor,
    mask: torch.Tensor,
    leaves: Leaves,
    node_dim: int,
    transitions: Optional[torch.Tensor] = None,
    follow_given: bool = True,
    reduce_types: Optional[torch.Tensor] = None,
    node_inputs: Optional[torch.Tensor] = None,
    return_nodes: bool = False,
    full_trees: bool = False,
    dense: bool = False,
    forests: bool = False,
) -> PreparedBatch:
    """:func:`check_batch`, then :func:`lay_out`, writing the leaves with ``leaves``."""
    transitions, total_steps = check_batch(
        inputs, mask, transitions, follow_given, reduce_types, node_inputs, full_trees, forests
    )
    return lay_out(
        inputs,
        mask,
        leaves,
        node_dim,
        total_steps,
        transitions,
        follow_given,
        reduce_types,
        node_inputs,
        return_nodes,
        dense,
    )
