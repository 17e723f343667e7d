"""The policy of a transition mode by its name, for tests parametrized over modes."""

from spinn_core import policies
from spinn_core.output import Mode

# The policy of each mode that takes no setting (a mixed policy takes its probability).
_WITHOUT_SETTINGS = {
    Mode.GIVEN: policies.Given,
    Mode.PREDICTED: policies.Greedy,
    Mode.SOFT: policies.SoftStrengths,
    Mode.SAMPLED: policies.Sampled,
    Mode.STRAIGHT_THROUGH: policies.StraightThroughGumbel,
}


def policy_for_mode(mode: str, self_transition_prob: float = 0.0) -> policies.TransitionPolicy:
    """The policy of a transition mode by name ("given", "predicted", "mixed", "soft",
    "sampled", "straight_through")."""
    if mode == Mode.MIXED:
        return policies.Mixed(self_transition_prob)
    for known, policy in _WITHOUT_SETTINGS.items():
        if mode == known:
            return policy()
    raise ValueError(f"unknown transition mode {mode!r}; one of {[m.value for m in Mode]}")
