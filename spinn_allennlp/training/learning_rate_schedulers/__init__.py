from spinn_allennlp.training.learning_rate_schedulers.step_decay_per_batch import StepDecayPerBatch

__all__ = ["StepDecayPerBatch"]
