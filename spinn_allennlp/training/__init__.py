"""Training pieces every task shares: the paper's learning-rate schedule, parse metrics, exact
recovery of interrupted runs and the Model 2 schedule from teacher forcing to the parser's own
predictions."""

from spinn_allennlp.training.callbacks import (
    ParserTemperatureSchedule,
    RestoreRandomState,
    SelfTransitionSchedule,
)
from spinn_allennlp.training.learning_rate_schedulers import ReduceOnPlateau, StepDecayPerBatch
from spinn_allennlp.training.metrics import MeanSquaredError, ParseMetrics, Share

__all__ = [
    "RestoreRandomState",
    "ReduceOnPlateau",
    "ParserTemperatureSchedule",
    "SelfTransitionSchedule",
    "StepDecayPerBatch",
    "MeanSquaredError",
    "ParseMetrics",
    "Share",
]
