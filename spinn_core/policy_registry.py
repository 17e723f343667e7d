"""Transition policies by name, so that a config can choose one (the ``spinn`` encoder's
``training_policy`` and ``evaluation_policy``): this package's and those written outside it.

A new way of choosing trees is one class, registered by name::

    from spinn_core.policies import Choice, PolicyTraits, Step, TransitionPolicy
    from spinn_core.policy_registry import register_policy

    @register_policy("reduce_when_possible")
    class ReduceWhenPossible(TransitionPolicy):
        traits = PolicyTraits(
            mode="reduce_when_possible",
            needs_parser=False,  # it does not read step.logits
            replayable=True,  # a tensor function of the step: a CUDA graph may replay it
        )

        def choose(self, step: Step) -> Choice:
            must_shift, _ = step.forced()  # (k,) bool: fewer than two items on the stack
            # REDUCE wherever it is legal: the left-branching tree.
            return Choice(step.legal(torch.ones_like(must_shift, dtype=torch.long)))

and chosen in a config by ``{"type": "reduce_when_possible", ...}``, the other keys its
constructor's arguments (``--include-package`` the module that defines it). Its
:class:`~spinn_core.policies.PolicyTraits` say what it needs and gives (the runner it drives,
what it does with given trees, ...); a class written before them, with flags as class
attributes (``mode = "reduce_when_possible"``, ``needs_parser = False``), still works. The
runner checks the moves of a policy whose traits do not say they are legal by construction
(:func:`spinn_core.policies.with_move_check`): an illegal move is an error that names the
policy and says what to do, not an index error deep in the stack. The check of a policy that
declares itself ``replayable`` runs on the device and is read once per pass; of any other,
on the host at every step.
"""

import inspect
from typing import Any, Mapping

from spinn_core.names import NameRegistry
from spinn_core.policies import (
    BeamMixture,
    BeamSearch,
    Given,
    Greedy,
    Mixed,
    Sampled,
    SoftStrengths,
    StraightThroughGumbel,
    TransitionPolicy,
)

# The policies by name (``spinn_core.names``).
POLICIES: NameRegistry[TransitionPolicy] = NameRegistry("policy", TransitionPolicy)
# A class decorator: the policy class is chosen in configs by ``{"type": name}``.
register_policy = POLICIES.register
registered_policies = POLICIES.names


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
    if name not in POLICIES.classes:
        raise ValueError(
            f"{setting}: no transition policy is registered as {name!r}; registered: "
            f"{registered_policies()} (a policy of your own: decorate its class with "
            f"@register_policy({name!r}) and --include-package its module)"
        )
    cls = POLICIES.classes[name]
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
