"""Training pieces every task shares: the paper's learning-rate schedule, parse metrics, and
exact recovery of interrupted runs."""

from spinn_allennlp.training.callbacks import RestoreRandomState
from spinn_allennlp.training.learning_rate_schedulers import StepDecayPerBatch
from spinn_allennlp.training.metrics import MeanSquaredError, ParseMetrics, Share

__all__ = ["RestoreRandomState", "StepDecayPerBatch", "MeanSquaredError", "ParseMetrics", "Share"]
