"""Training pieces every task shares: the paper's learning-rate schedule, parse metrics and the
Model 2 schedule from teacher forcing to the parser's own predictions."""

from spinn_allennlp.training.callbacks import SelfTransitionSchedule
from spinn_allennlp.training.learning_rate_schedulers import StepDecayPerBatch
from spinn_allennlp.training.metrics import ParseMetrics, Share

__all__ = ["SelfTransitionSchedule", "StepDecayPerBatch", "ParseMetrics", "Share"]
