from spinn_allennlp.training.callbacks.self_transition_schedule import SelfTransitionSchedule

__all__ = ["SelfTransitionSchedule"]
