"""Semantic relatedness of sentence pairs: SICK (reader "sick", model "tree_relatedness",
predictor "tree_relatedness"); the same reader gives SICK's entailment labels to the NLI model."""

from spinn_allennlp.relatedness.dataset_readers import SickReader
from spinn_allennlp.relatedness.models import TreeRelatedness
from spinn_allennlp.relatedness.predictors import TreeRelatednessPredictor

__all__ = ["SickReader", "TreeRelatedness", "TreeRelatednessPredictor"]
