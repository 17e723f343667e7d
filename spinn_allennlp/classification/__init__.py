"""Sentence classification: ListOps (Nangia and Bowman 2018) with SPINN and its latent-tree
variants. Importing this package registers its reader and model."""

from spinn_allennlp.classification.dataset_readers import ListOpsReader
from spinn_allennlp.classification.models import SpinnClassifier

__all__ = ["ListOpsReader", "SpinnClassifier"]
