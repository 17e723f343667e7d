from spinn_allennlp.training.metrics.parse_metrics import ParseMetrics
from spinn_allennlp.training.metrics.share import Share

__all__ = ["ParseMetrics", "Share"]
