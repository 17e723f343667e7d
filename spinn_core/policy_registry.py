"""Transition policies by name, so that a config can choose one (the ``spinn`` encoder's
``training_policy`` and ``evaluation_policy``), and a check on the moves of policies written
outside this package.

A new way of choosing trees is one class, registered by name::

    from spinn_core.policies import Choice, Step, TransitionPolicy
    from spinn_core.policy_registry import register_policy

    @register_policy("reduce_when_possible")
    class ReduceWhenPossible(TransitionPolicy):
        mode = "reduce_when_possible"
        needs_parser = False  # it does not read step.logits

        def choose(self, step: Step) -> Choice:
            must_shift, _ = step.forced()  # (k,) bool: fewer than two items on the stack
            # REDUCE wherever it is legal: the left-branching tree.
            return Choice(step.legal(torch.ones_like(must_shift, dtype=torch.long)))

and chosen in a config by ``{"type": "reduce_when_possible", ...}``, the other keys its
constructor's arguments (``--include-package`` the module that defines it). The runner checks
the moves of a policy whose ``choose`` is not one of this package's (:func:`with_move_check`):
an illegal move is an error that names the policy and says what to do, not an index error
deep in the stack.
"""

import inspect
from typing import Any, Callable, Dict, List, Mapping, Type, TypeVar

import torch

from spinn_core.policies import (
    BeamMixture,
    BeamSearch,
    Choice,
    Given,
    Greedy,
    Mixed,
    Replayed,
    Sampled,
    SoftStrengths,
    Step,
    StraightThroughGumbel,
    TransitionPolicy,
    impose_forced,
)
from spinn_core.transitions import REDUCE, SHIFT

P = TypeVar("P", bound=Type[TransitionPolicy])

_REGISTRY: Dict[str, Type[TransitionPolicy]] = {}


def register_policy(name: str) -> Callable[[P], P]:
    """A class decorator: the policy class is chosen in configs by ``{"type": name}``."""

    def add(cls: P) -> P:
        if not (isinstance(cls, type) and issubclass(cls, TransitionPolicy)):
            raise TypeError(f"register_policy({name!r}) decorates a TransitionPolicy subclass")
        existing = _REGISTRY.get(name)
        if existing is not None and existing is not cls:
            raise ValueError(
                f"the policy name {name!r} is taken by {existing.__module__}."
                f"{existing.__qualname__}: choose another"
            )
        _REGISTRY[name] = cls
        return cls

    return add


def registered_policies() -> List[str]:
    return sorted(_REGISTRY)


def policy_from_config(config: Mapping[str, Any], setting: str = "policy") -> TransitionPolicy:
    """The policy a config names: ``{"type": name, **constructor arguments}``. ``setting``: the
    config key it came from, for the messages."""
    if not isinstance(config, Mapping) or "type" not in config:
        raise ValueError(
            f'{setting} must be an object with a "type" (one of {registered_policies()}), '
            f"got {config!r}"
        )
    arguments = {key: value for key, value in config.items() if key != "type"}
    name = config["type"]
    if name not in _REGISTRY:
        raise ValueError(
            f"{setting}: no transition policy is registered as {name!r}; registered: "
            f"{registered_policies()} (a policy of your own: decorate its class with "
            f"@register_policy({name!r}) and --include-package its module)"
        )
    cls = _REGISTRY[name]
    try:
        inspect.signature(cls).bind(**arguments)
    except TypeError as error:
        accepted = [p for p in inspect.signature(cls).parameters if p not in ("args", "kwargs")]
        raise ValueError(
            f"{setting} {name!r}: {error}; {cls.__name__} takes {accepted or 'no arguments'}"
        ) from None
    return cls(**arguments)


for _name, _cls in {
    "given": Given,
    "greedy": Greedy,
    "beam_search": BeamSearch,
    "beam_mixture": BeamMixture,
    "mixed": Mixed,
    "sampled": Sampled,
    "soft": SoftStrengths,
    "straight_through_gumbel": StraightThroughGumbel,
}.items():
    register_policy(_name)(_cls)

# The `choose` methods whose moves are legal by construction (they pass them through
# `Step.legal`, follow checked trees, or check themselves).
_CHECKED_CHOOSE = {
    cls.choose
    for cls in (Given, Greedy, BeamSearch, BeamMixture, Mixed, Sampled, Replayed, TransitionPolicy)
}

# What a wrapper copies from the policy it wraps.
_FLAGS = (
    "mode",
    "follows_given",
    "needs_given",
    "needs_parser",
    "soft",
    "searches",
    "mixes",
    "left_padded",
    "learns_from_task",
    "replayable",
    "rescores_only",
)


class MoveChecked(TransitionPolicy):
    """``policy`` with every move it chooses checked against the legal-move rule (SHIFT below two
    stack items, REDUCE once the buffer is empty, each move SHIFT = 0 or REDUCE = 1): an illegal
    move is a ValueError naming the policy and the fix. One host read per step: a check for
    policies written elsewhere, which this package cannot vouch for."""

    def __init__(self, policy: TransitionPolicy) -> None:
        self.policy = policy
        for flag in _FLAGS:
            if hasattr(policy, flag):
                setattr(self, flag, getattr(policy, flag))
        # Its checks read values back to the host every step: no CUDA graph can replay it.
        self.replayable = False

    def choose(self, step: Step) -> Choice:
        choice = self.policy.choose(step)
        action = choice.action
        must_shift, must_reduce = step.forced()
        name = type(self.policy).__name__
        if action.shape != must_shift.shape or action.dtype != torch.long:
            raise ValueError(
                f"{name}.choose returned moves of shape {tuple(action.shape)} and dtype "
                f"{action.dtype} at step {step.t}: one long per running sentence, "
                f"shape {tuple(must_shift.shape)}, is expected"
            )
        if bool(((action != SHIFT) & (action != REDUCE)).any()):
            raise ValueError(
                f"{name}.choose returned a move that is neither SHIFT (0) nor REDUCE (1) at "
                f"step {step.t}"
            )
        if choice.parents is not None:
            # A beam's row moves from its parent's stack.
            must_shift = must_shift.index_select(0, choice.parents)
            must_reduce = must_reduce.index_select(0, choice.parents)
        illegal = impose_forced(action, must_shift, must_reduce) != action
        if bool(illegal.any()):
            raise ValueError(
                f"{name}.choose chose an illegal move at step {step.t} (REDUCE with fewer than "
                f"two items on the stack, or SHIFT with the buffer empty): pass its moves "
                f"through step.legal(action), which imposes the forced ones"
            )
        return choice

    def reduce_strength(self, step: Step) -> torch.Tensor:
        return self.policy.reduce_strength(step)

    def __repr__(self) -> str:
        return f"MoveChecked({self.policy!r})"


def with_move_check(policy: TransitionPolicy) -> TransitionPolicy:
    """``policy`` itself when its moves are legal by construction (a discrete policy of this
    package, or a soft one); else it wrapped in :class:`MoveChecked`."""
    if policy.soft or isinstance(policy, MoveChecked):
        return policy
    if type(policy).choose in _CHECKED_CHOOSE:
        return policy
    return MoveChecked(policy)
