"""Runners: each takes a prepared batch, the model's parts and a transition policy, and
returns a ``SpinnOutput``.

* ``thin_stack`` — step by step, Algorithm 1 batched over sentences: every variant;
* ``levelwise`` — one tree level at a time: given trees without a tracker (PI-NT);
* ``soft_stack`` — a differentiable stack and buffer driven by REDUCE strengths;
* ``beam`` — beam search over the parser's transitions, then the thin stack on the best tree;
  or a mixture over a beam of trees, with gradients (beam training).

``spinn_core.spinn.pick_runner`` is the one place that chooses among them.
"""

from spinn_core.runners.beam import run_beam, run_beam_mixture
from spinn_core.runners.levelwise import run_levelwise
from spinn_core.runners.soft_stack import run_soft_stack
from spinn_core.runners.thin_stack import run_thin_stack

__all__ = ["run_beam", "run_beam_mixture", "run_levelwise", "run_soft_stack", "run_thin_stack"]
