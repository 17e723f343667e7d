"""The fused GPU runner: the thin stack's static-shape loop with each step in Triton kernels.

* ``kernels`` -- the Triton kernels (decorated at the first launch; Triton is optional) and
  the launch counter (``kernels.launches``);
* ``refusal`` -- :func:`fused_refusal`: which parts, policies, devices and dtypes the kernels
  implement, and why not the others;
* ``runner`` -- :func:`run_fused_thin_stack`, a runner like the others (``runners/``).

Importing this package imports no Triton: the core needs torch alone.
"""

from spinn_core.fused.kernels import launches
from spinn_core.fused.refusal import fused_refusal
from spinn_core.fused.runner import run_fused_thin_stack

__all__ = ["fused_refusal", "launches", "run_fused_thin_stack"]
