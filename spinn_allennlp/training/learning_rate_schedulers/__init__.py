from spinn_allennlp.training.learning_rate_schedulers.reduce_on_plateau import ReduceOnPlateau
from spinn_allennlp.training.learning_rate_schedulers.step_decay_per_batch import StepDecayPerBatch

__all__ = ["ReduceOnPlateau", "StepDecayPerBatch"]
