"""Compositions by name, so that a config chooses one (`"composition": "grc"`, or
`{"type": "grc"}`): this package's and those written outside it.

A new composition is one class, registered by name::

    from spinn_core.compositions import Composition, register_composition

    @register_composition("mean")
    class MeanComposition(Composition):
        ...  # forward(left, right, extra), leaf(extra), hidden(nodes); see Composition

and chosen in a config by ``"composition": "mean"`` or ``{"type": "mean", ...}``, the other keys
its constructor's arguments beside ``hidden_dim`` and ``extra_dim`` (``--include-package`` the
module that defines it). Every runner takes it (the fused GPU kernels compose with the TreeLSTM
only, and say so for the others).
"""

import inspect
from typing import Any, Dict, Mapping, Tuple, Type, Union

from spinn_core.compositions.base import Composition
from spinn_core.names import NameRegistry

# The compositions by name (``spinn_core.names``).
COMPOSITIONS: NameRegistry[Composition] = NameRegistry("composition", Composition)
# What the composition setting may be: a registered name, or {"type": name, **arguments}.
CompositionSetting = Union[str, Mapping[str, Any]]
# A class decorator: the composition class is chosen in configs by its name.
register_composition = COMPOSITIONS.register
registered_compositions = COMPOSITIONS.names


def composition_choice(
    setting: CompositionSetting, key: str = "composition"
) -> Tuple[Type[Composition], Dict[str, Any]]:
    """The class and constructor arguments (beside ``hidden_dim`` and ``extra_dim``) a setting
    names; a ValueError naming ``key`` (the setting's name, for the message) otherwise."""
    if isinstance(setting, str):
        name, arguments = setting, {}
    elif isinstance(setting, Mapping) and "type" in setting:
        name = setting["type"]
        arguments = {k: v for k, v in setting.items() if k != "type"}
    else:
        raise ValueError(
            f'{key} must be a name or an object with a "type" (one of '
            f"{registered_compositions()}), got {setting!r}"
        )
    if name not in COMPOSITIONS.classes:
        raise ValueError(
            f"{key} must be one of {registered_compositions()}, got {name!r} (a composition of "
            f"your own: decorate its class with @register_composition({name!r}) and "
            "--include-package its module)"
        )
    cls = COMPOSITIONS.classes[name]
    try:
        inspect.signature(cls).bind(hidden_dim=1, extra_dim=0, **arguments)
    except TypeError as error:
        accepted = [
            p
            for p in inspect.signature(cls).parameters
            if p not in ("hidden_dim", "extra_dim", "args", "kwargs")
        ]
        raise ValueError(
            f"{key} {name!r}: {error}; {cls.__name__} takes {accepted or 'no other arguments'}"
        ) from None
    return cls, arguments


def build_composition(
    setting: CompositionSetting, hidden_dim: int, extra_dim: int = 0
) -> Composition:
    """The composition a setting names, for nodes of ``hidden_dim`` and an extra input of
    ``extra_dim``."""
    cls, arguments = composition_choice(setting)
    return cls(hidden_dim, extra_dim=extra_dim, **arguments)
