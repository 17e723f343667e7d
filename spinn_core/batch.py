"""One prepared batch: what every runner needs before its first step, made once.

:func:`prepare_batch` checks the inputs (word vectors, mask, transitions, REDUCE types, node
inputs) and decides the number of steps (:func:`check_batch`, which reads values back to the
host), then lays the batch out on its device (:func:`lay_out`, which does not): each sentence's
number of steps, the sentences longest first, and the write-once tape (``tape.py``) that holds
every node of the pass, with the leaves (the buffer) already written. The thin stack, the
level-wise runner and the soft stack all start from it (``runners/``). A CUDA graph
(``graphs.py``) captures :func:`lay_out` and the runner, after :func:`check_batch` has run.

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
"""

from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import torch

from spinn_core.batching import (
    check_given_transitions,
    check_transition_values,
    check_transitions_tensor,
    check_word_vectors,
    checked_mask,
    default_transitions,
    fit_width,
)
from spinn_core.tape import WriteOnceTape
from spinn_core.transitions import PAD

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
