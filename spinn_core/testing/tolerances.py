"""Float32 tolerances derived from the computation, not guessed.

Two float32 computations of the same function (the level-wise and the step-by-step path, a
batch and a single sentence) round differently: BLAS/oneDNN pick different kernels for
different shapes and CPUs, so results agree only up to rounding. Exactness claims are tested in
float64; in float32 a test compares each path with the float64 result of the same parameters
and inputs, allowing what rounding can explain.

The allowance is a first-order bound in the style of Higham's ``gamma_n``: an element that is a
sum of ``n`` terms ``a_k``, each itself computed with relative error ``e``, is off by at most
about ``(n + e / u) * u * sum_k |a_k|``, with ``u`` the unit roundoff (2^-24 for float32).
:class:`LinearMagnitudes` measures ``sum_k |a_k|`` for every element of every ``nn.Linear``
parameter's gradient (and the largest pre-activation sum of any call) with hooks during a
float64 forward and backward pass, so the bound uses the magnitudes of this very computation.
"""

from typing import Dict, List, Optional

import torch
from torch import nn

UNIT_ROUNDOFF = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.bfloat16: 2.0**-8,
    torch.float16: 2.0**-11,
}


def unit_roundoff(dtype: torch.dtype) -> float:
    return UNIT_ROUNDOFF[dtype]


class LinearMagnitudes:
    """Records, while active, for every ``nn.Linear`` of ``module``:

    * ``gradient[name]``: per element of the parameter ``name``'s gradient, ``sum_k |a_k|``
      over the terms backward adds into it (weight: ``|dL/dy|^T |x|`` summed over calls and
      rows; bias: ``|dL/dy|`` summed), and ``terms[name]``, the number of rows summed;
    * ``input_gradient[prefix]``: per call, ``|dL/dy| |W|`` for each input element (rows in
      call order), ``sum_k |a_k|`` of the gradient reaching the layer's input;
    * ``largest_preactivation``: the largest ``(|x| |W|^T + |b|)`` of any output element, i.e.
      the largest absolute sum a forward dot product accumulates.

    Use as a context manager around one forward and backward pass (float64 for the magnitudes).
    """

    def __init__(self, module: nn.Module) -> None:
        self.module = module
        self.gradient: Dict[str, torch.Tensor] = {}
        self.terms: Dict[str, int] = {}
        # Per call of each layer, |dL/dy| |W| per input element: sum_k |a_k| of dL/dx.
        self.input_gradient: Dict[str, List[torch.Tensor]] = {}
        self.largest_preactivation = 0.0
        self._handles: List = []

    def __enter__(self) -> "LinearMagnitudes":
        for prefix, layer in self.module.named_modules():
            if isinstance(layer, nn.Linear):
                self._watch(prefix, layer)
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()

    def _watch(self, prefix: str, layer: nn.Linear) -> None:
        name = f"{prefix}." if prefix else ""

        def forward_hook(_, args, output):
            x = args[0].detach()
            sums = x.abs() @ layer.weight.detach().abs().t()
            if layer.bias is not None:
                sums = sums + layer.bias.detach().abs()
            self.largest_preactivation = max(self.largest_preactivation, float(sums.max()))
            if output.requires_grad:
                output.register_hook(lambda grad: self._add(name, layer, x, grad))

        self._handles.append(layer.register_forward_hook(forward_hook))

    def _add(self, name: str, layer: nn.Linear, x: torch.Tensor, grad: torch.Tensor) -> None:
        rows_x = x.reshape(-1, x.size(-1)).abs()
        rows_grad = grad.reshape(-1, grad.size(-1)).abs()
        contributions = {f"{name}weight": rows_grad.t() @ rows_x}
        if layer.bias is not None:
            contributions[f"{name}bias"] = rows_grad.sum(dim=0)
        for key, value in contributions.items():
            self.gradient[key] = self.gradient.get(key, 0) + value
            self.terms[key] = self.terms.get(key, 0) + rows_x.size(0)
        weight = layer.weight.detach().abs()
        self.input_gradient.setdefault(name.rstrip("."), []).append(rows_grad @ weight)


def gradient_tolerance(
    magnitudes: LinearMagnitudes,
    name: str,
    term_error_steps: int,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Per-element allowance for parameter ``name``'s gradient computed in ``dtype``:
    ``(n + term_error_steps) * u * sum_k |a_k|``. ``n`` (the number of summed rows) bounds the
    summation's rounding; ``term_error_steps`` bounds each term's own relative error in units of
    ``u`` (e.g. tree depth x fan-in of the dot products a gradient passes through)."""
    return (
        (magnitudes.terms[name] + term_error_steps)
        * unit_roundoff(dtype)
        * magnitudes.gradient[name]
    )


def value_tolerance(
    num_operations: int,
    fan_in: int,
    magnitude: float,
    dtype: torch.dtype = torch.float32,
    growth: Optional[float] = None,
) -> float:
    """Allowance for a value computed through ``num_operations`` dependent dot products of
    length ``fan_in`` whose absolute sums are at most ``magnitude`` (rounding of each
    ``<= fan_in * u * magnitude``, first order), times ``growth`` (how much a later operation can
    amplify an earlier error, e.g. 1 + max|c| for an LSTM cell; 1 by default)."""
    return num_operations * fan_in * unit_roundoff(dtype) * magnitude * (growth or 1.0)
