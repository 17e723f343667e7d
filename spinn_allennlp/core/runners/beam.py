"""Beam search over transitions, at evaluation: the parser's most probable tree instead of its
greedy one.

Two passes over the thin stack (``thin_stack.py``). The search: every sentence repeated
``width`` times in consecutive rows (the longest-first order is stable, so the copies stay
together), run without gradients under :class:`~spinn_allennlp.core.policies.BeamSearch`, which
at each step keeps each sentence's ``width`` most probable partial parses and has the runner
hand each row the stack, tracker state and history of the parse it continues
(``Choice.parents``); the best is each group's first row at the end. Then the encoding: each
sentence once, on the tree found (the tracker sees the same stacks, so the same states and
logits as on the search's path), with gradients where they are enabled, on the batch as it
was prepared (its leaves computed once). The search costs
about ``width`` greedy passes, the encoding one more.
"""

import dataclasses

import torch

from spinn_allennlp.core.batch import PreparedBatch, prepare_batch
from spinn_allennlp.core.output import SpinnOutput
from spinn_allennlp.core.parts import SpinnParts
from spinn_allennlp.core.policies import BeamSearch, Given, TransitionPolicy
from spinn_allennlp.core.runners.thin_stack import run_thin_stack


def run_beam(batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy) -> SpinnOutput:
    """Encodes ``batch`` on the trees a beam search under ``policy`` (a :class:`BeamSearch`)
    finds. The output's ``beam_log_probs`` holds each tree's log-probability under the
    parser."""
    if not isinstance(policy, BeamSearch):
        raise TypeError(f"run_beam needs a BeamSearch policy, got {policy!r}")
    width = policy.width
    with torch.no_grad():
        copies = prepare_batch(
            batch.inputs.repeat_interleave(width, dim=0),
            batch.mask.repeat_interleave(width, dim=0),
            parts.leaves,
            parts.node_dim,
            follow_given=False,
            node_inputs=(
                None
                if batch.node_inputs is None
                else batch.node_inputs.repeat_interleave(width, dim=0)
            ),
        )
        policy.start(copies.batch_size, batch.inputs)
        searched = run_thin_stack(copies, parts, policy)
        assert policy.scores is not None
        # Each group's first row holds its best parse; scores are in sorted order.
        trees = searched.transitions[::width]
        log_probs = policy.scores.index_select(0, copies.rank)[::width]
    # The batch as prepared, its leaves already on the tape (with their gradients), now
    # following the trees found: every tree over n words takes the 2n - 1 steps the batch was
    # laid out for, so its order and tape layout hold as they are.
    found = dataclasses.replace(batch, transitions=trees.to(batch.device))
    output = run_thin_stack(found, parts, Given())
    return dataclasses.replace(output, mode=policy.mode, beam_log_probs=log_probs)
