from spinn_allennlp.training.metrics.mean_squared_error import MeanSquaredError
from spinn_allennlp.training.metrics.parse_metrics import ParseMetrics
from spinn_allennlp.training.metrics.share import Share

__all__ = ["MeanSquaredError", "ParseMetrics", "Share"]
