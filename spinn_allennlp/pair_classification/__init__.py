"""Sentence-pair classification (NLI): SNLI/MultiNLI with SPINN, as in the paper's §4.
Importing this package registers its reader, model and predictor."""

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.pair_classification.models import SpinnNliClassifier
from spinn_allennlp.pair_classification.predictors import SpinnNliPredictor

__all__ = ["SnliTransitionsReader", "SpinnNliClassifier", "SpinnNliPredictor"]
