from spinn_allennlp.relatedness.predictors.tree_relatedness import TreeRelatednessPredictor

__all__ = ["TreeRelatednessPredictor"]
