from spinn_allennlp.training.callbacks.random_state import (
    RestoreRandomState,
    get_random_state,
    set_random_state,
)

__all__ = ["RestoreRandomState", "get_random_state", "set_random_state"]
