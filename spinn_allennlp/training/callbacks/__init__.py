from spinn_allennlp.training.callbacks.random_state import (
    RestoreRandomState,
    get_random_state,
    set_random_state,
)
from spinn_allennlp.training.callbacks.self_transition_schedule import SelfTransitionSchedule

__all__ = ["RestoreRandomState", "SelfTransitionSchedule", "get_random_state", "set_random_state"]
