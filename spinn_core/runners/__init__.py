"""Runners: each takes a prepared batch, the model's parts and a transition policy, and
returns a ``SpinnOutput``.

* ``thin_stack`` — step by step, Algorithm 1 batched over sentences: every variant;
* ``levelwise`` — one tree level at a time: given trees without a tracker (PI-NT);
* ``soft_stack`` — a differentiable stack and buffer driven by REDUCE strengths;
* ``beam`` — beam search over the parser's transitions, then the thin stack on the best tree;
  or a mixture over a beam of trees, with gradients (beam training).

``pick_runner`` is the one place that chooses among them.
"""

from typing import Callable

from spinn_core.batch import PreparedBatch
from spinn_core.output import SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import TransitionPolicy
from spinn_core.runners.beam import run_beam, run_beam_mixture
from spinn_core.runners.levelwise import run_levelwise
from spinn_core.runners.soft_stack import run_soft_stack
from spinn_core.runners.thin_stack import run_thin_stack

Runner = Callable[[PreparedBatch, SpinnParts, TransitionPolicy], SpinnOutput]


def pick_runner(policy: TransitionPolicy, has_tracker: bool, levelwise: bool) -> Runner:
    """The runner a pass under ``policy`` takes: the soft stack for soft strengths, the beam
    runners for a search, level by level for given trees without a tracker (``levelwise``:
    the loop runs tree-height times instead of 2N - 1), else the thin stack."""
    if policy.soft:
        return run_soft_stack
    if policy.searches:
        return run_beam_mixture if policy.mixes else run_beam
    if policy.follows_given and not has_tracker and levelwise:
        return run_levelwise
    return run_thin_stack


__all__ = [
    "Runner",
    "pick_runner",
    "run_beam",
    "run_beam_mixture",
    "run_levelwise",
    "run_soft_stack",
    "run_thin_stack",
]
