"""Beams over transitions: the parser's most probable tree at evaluation (:func:`run_beam`),
and a mixture over a beam of trees that trains the parser from the task (:func:`run_beam_mixture`).

Both run the thin stack (``thin_stack.py``) over every sentence repeated ``width`` times in
consecutive rows (the longest-first order is stable, so the copies stay together), their
leaves read from the batch's tape; a beam policy keeps each sentence's ``width`` most probable
partial parses at every step and has the runner hand each row the stack, tracker state and
history of the parse it continues (``Choice.parents``); each group's rows end best first.

The search (:class:`~spinn_core.policies.BeamSearch`) runs without gradients, then
each sentence is encoded once on the tree found (the tracker sees the same stacks, so the same
states and logits as on the search's path), with gradients where they are enabled, on the
batch as it was prepared: about ``width`` greedy passes, and one more.

The mixture (:class:`~spinn_core.policies.BeamMixture`) is one pass with gradients:
the sentence vector is the softmax over the parses' summed log-probabilities times their
roots, so the task's loss trains the parser through the scores and the composition through
the roots: about ``width`` training passes.
"""

import dataclasses
from typing import Type, TypeVar

import torch

from spinn_core.batch import PreparedBatch, lay_out
from spinn_core.output import SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import BeamMixture, BeamSearch, Given, TransitionPolicy
from spinn_core.rules import check_beam_mixture_nodes
from spinn_core.runners.thin_stack import run_thin_stack


def beam_copies(batch: PreparedBatch, width: int) -> PreparedBatch:
    """``batch`` with every sentence repeated ``width`` times in consecutive rows, laid out for
    a pass that chooses its own moves (the longest-first order is stable, so the copies of a
    sentence stay together and run the same steps). The leaves are read from ``batch``'s
    tape: the same values (one projection, one dropout mask), and gradients flow back to
    them."""
    rows = batch.word_rows().repeat_interleave(width, dim=0)  # (B * width, N)

    def leaves(inputs: torch.Tensor, mask: torch.Tensor, dense: bool = False) -> torch.Tensor:
        return batch.tape.read(rows.flatten() if dense else rows[mask])

    node_inputs = batch.node_inputs
    return lay_out(
        batch.inputs.repeat_interleave(width, dim=0),
        batch.mask.repeat_interleave(width, dim=0),
        leaves,
        batch.tape.data.size(1),
        batch.total_steps,
        follow_given=False,
        node_inputs=None if node_inputs is None else node_inputs.repeat_interleave(width, dim=0),
        dense=batch.dense,
    )


B = TypeVar("B", BeamSearch, BeamMixture)


def _unwrapped(policy: TransitionPolicy, kind: Type[B]) -> B:
    """The beam policy of ``kind`` that ``policy`` is, or wraps (a policy written elsewhere
    runs with its moves checked: ``policies.MoveChecked``)."""
    inner = getattr(policy, "policy", policy)
    if not isinstance(inner, kind):
        raise TypeError(f"this runner needs a {kind.__name__} policy, got {policy!r}")
    return inner


def run_beam(batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy) -> SpinnOutput:
    """Encodes ``batch`` on the trees a beam search under ``policy`` (a :class:`BeamSearch`)
    finds. The output's ``beam_log_probs`` holds each tree's log-probability under the
    parser."""
    beam = _unwrapped(policy, BeamSearch)
    width = beam.width
    with torch.no_grad():
        copies = beam_copies(batch, width)
        beam.start(copies.batch_size, batch.inputs)
        searched = run_thin_stack(copies, parts, policy)
        assert beam.scores is not None
        # Each group's first row holds its best parse; scores are in sorted order.
        trees = searched.transitions[::width]
        log_probs = beam.scores.index_select(0, copies.rank)[::width]
    # The batch as prepared, its leaves already on the tape (with their gradients), now
    # following the trees found: every tree over n words takes the 2n - 1 steps the batch was
    # laid out for, so its order and tape layout hold as they are.
    found = dataclasses.replace(batch, transitions=trees.to(batch.device))
    output = run_thin_stack(found, parts, Given())
    return dataclasses.replace(output, mode=policy.mode, beam_log_probs=log_probs)


def run_beam_mixture(
    batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy
) -> SpinnOutput:
    """Encodes ``batch`` as the mixture of a beam's roots (``policy``: a :class:`BeamMixture`):
    one pass of the thin stack over ``width`` copies of every sentence, with gradients, the
    policy handing each row the parse it continues; each sentence's vector is
    ``sum_j softmax(scores)_j * root_j`` over its ``width`` final parses. The output's
    ``transitions`` (and logits, REDUCE types) are the best parse's; ``beam_scores`` and
    ``beam_transitions`` hold every parse of the beam, best first."""
    beam = _unwrapped(policy, BeamMixture)
    check_beam_mixture_nodes(batch.return_nodes)
    width = beam.width
    copies = beam_copies(batch, width)
    beam.start(copies.batch_size, batch.inputs)
    searched = run_thin_stack(copies, parts, policy)
    assert beam.scores is not None
    # Shape: (B, width), each sentence's parses best first (copies keep their order).
    scores = beam.scores.index_select(0, copies.rank).view(-1, width)
    roots = searched.sentence.view(scores.size(0), width, -1)
    sentence = (torch.softmax(scores, dim=1).unsqueeze(2) * roots).sum(dim=1)
    best = slice(None, None, width)
    logits = None
    if searched.transition_logits is not None:
        logits = beam.path_logits(copies.rank[best])
    reduce_types = None if searched.reduce_types is None else searched.reduce_types[best]
    return SpinnOutput(
        sentence=sentence,
        transitions=searched.transitions[best],
        transition_logits=logits,
        mode=policy.mode,
        reduce_types=reduce_types,
        beam_log_probs=scores[:, 0],
        beam_scores=scores,
        beam_transitions=searched.transitions.view(scores.size(0), width, -1),
        beam_roots=roots if beam.mix != "roots" else None,
        beam_mix=beam.mix,
    )
