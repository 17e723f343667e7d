"""Which passes the fused runner implements: :func:`fused_refusal` says why not, or None.

Torch alone (and the standard library): asking imports no Triton, so the runner picker can ask
on any machine."""

import importlib.util
from typing import Optional

import torch

from spinn_core.compositions import TreeLSTMComposition
from spinn_core.fused import kernels
from spinn_core.parts import SpinnParts
from spinn_core.policies import Greedy, TransitionPolicy


def fused_refusal(
    parts: SpinnParts, policy: TransitionPolicy, device: torch.device, dtype: torch.dtype
) -> Optional[str]:
    """None when the fused runner (``runner.run_fused_thin_stack``) implements a pass of a
    model with ``parts`` under ``policy`` on tensors of ``device`` and ``dtype``; else one
    sentence saying why not (the first reason found)."""
    for check in (_platform_refusal(device, dtype), _model_refusal(parts, dtype)):
        if check is not None:
            return check
    return _policy_refusal(policy, parts)


def _platform_refusal(device: torch.device, dtype: torch.dtype) -> Optional[str]:
    if importlib.util.find_spec("triton") is None:
        return "Triton is not installed (PyTorch's CUDA builds bring it)"
    if device.type not in ("cuda", "cpu"):
        return f"the fused kernels run on CUDA devices, not {device.type}"
    if dtype not in (torch.float32, torch.float64):
        return f"the fused kernels compute in float32 or float64, not {dtype}"
    if torch.is_autocast_enabled(device.type):
        return "autocast (mixed precision) is active, and the fused kernels have no bf16 path"
    if device.type == "cpu":
        interpreted = kernels.decorated_interpreted()
        if not kernels.interpreter_requested() or interpreted is False:
            return (
                "CPU tensors run the fused kernels only in Triton's interpreter: set "
                "TRITON_INTERPRET=1 before the first fused pass"
            )
        return None
    if kernels.decorated_interpreted():
        return "the fused kernels were set up for Triton's interpreter (TRITON_INTERPRET=1)"
    if torch.cuda.get_device_capability(device) < (8, 0):
        return "the fused kernels are built for sm_80 and later (Ampere, Hopper)"
    return None


def _model_refusal(parts: SpinnParts, dtype: torch.dtype) -> Optional[str]:
    compose = parts.compose
    if not isinstance(compose, TreeLSTMComposition):
        return f"the fused kernels compose with the TreeLSTM only, not {type(compose).__name__}"
    if parts.summaries is not None:
        return "stack and buffer summaries (summary_dim > 0) are not in the fused kernels"
    if parts.type_embedding is not None or parts.type_classifier is not None:
        return "typed REDUCE (reduce_types > 0) is not in the fused kernels"
    tracker = parts.tracker
    tracking = tracker.tracking_dim if tracker is not None else 0
    extra = tracking if parts.composition_reads_tracker else 0
    if compose.extra_dim != extra:
        return (
            "node inputs in the composition's extra input (node_input_dim > 0) are not in the "
            "fused kernels"
        )
    if tracker is not None and (tracker.cell.bias_ih is None or tracker.cell.bias_hh is None):
        return "the fused tracker needs its LSTM cell's biases"
    weights = [compose.linear.weight] + (list(tracker.parameters()) if tracker else [])
    if any(weight.dtype != dtype for weight in weights):
        return f"the model's weights are not all in the inputs' dtype ({dtype})"
    return None


def _policy_refusal(policy: TransitionPolicy, parts: SpinnParts) -> Optional[str]:
    """The kernels make two policies' moves: the given transitions' (planned before the first
    step) and the greedy parser's (argmax through the legal-move rule, in the kernel)."""
    traits = policy.traits
    if traits.drives == "soft":
        return "a soft stack's strengths are not in the fused kernels"
    if traits.drives != "discrete":
        return "beam search is not in the fused kernels"
    if traits.given == "mixes":
        return "a policy that mixes given and own transitions is not in the fused kernels"
    if traits.given == "follows":
        return None
    # Greedy's moves, by the method that makes them (a subclass that keeps it qualifies; a
    # wrapper that checks every move on the host does not).
    if type(policy).choose is not Greedy.choose:
        return (
            f"the fused kernels make the given transitions' or the greedy parser's moves, not "
            f"{type(policy).__name__}'s"
        )
    if not parts.has_parser:
        return "the greedy policy needs a parser (predict_transitions=true)"
    return None
