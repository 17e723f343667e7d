"""Sentence-pair classification (NLI): SNLI/MultiNLI with SPINN, as in the paper's §4, and the
attention models of Chen et al. (2017): ESIM, the syntactic tree-LSTM model and HIM.
Importing this package registers its reader, models and predictor."""

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.pair_classification.models import (
    EsimNli,
    HimNli,
    SpinnNliClassifier,
    TreeEsimNli,
)
from spinn_allennlp.pair_classification.predictors import SpinnNliPredictor

__all__ = [
    "SnliTransitionsReader",
    "EsimNli",
    "HimNli",
    "SpinnNliClassifier",
    "TreeEsimNli",
    "SpinnNliPredictor",
]
