"""What every task's predictor shares: one answer per input line, bad lines answered with an
error while the rest go on."""

from spinn_allennlp.predictors.line_predictor import LinePredictor, UnreadableLine

__all__ = ["LinePredictor", "UnreadableLine"]
