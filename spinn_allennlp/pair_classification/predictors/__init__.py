from spinn_allennlp.pair_classification.predictors.spinn_nli import SpinnNliPredictor

__all__ = ["SpinnNliPredictor"]
