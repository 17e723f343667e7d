"""Training pieces every task shares: the paper's learning-rate schedule and parse metrics."""

from spinn_allennlp.training.learning_rate_schedulers import StepDecayPerBatch
from spinn_allennlp.training.metrics import MeanSquaredError, ParseMetrics, Share

__all__ = ["StepDecayPerBatch", "MeanSquaredError", "ParseMetrics", "Share"]
