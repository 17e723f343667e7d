"""Sentence classification over trees: the Stanford Sentiment Treebank with a label on every
node (reader "sst_trees", model and predictor "tree_node_classifier") and ListOps (Nangia and
Bowman 2018; reader "listops", model and predictor "spinn_classifier") with SPINN and its
latent-tree variants; any labelled sentences with real trees (reader
"text_classification_transitions", model and predictor "spinn_classifier"). Importing this
package registers its readers, models and predictors."""

from spinn_allennlp.classification.dataset_readers import (
    ListOpsReader,
    SstTreesReader,
    TextClassificationTransitionsReader,
)
from spinn_allennlp.classification.models import SpinnClassifier, TreeNodeClassifier
from spinn_allennlp.classification.predictors import (
    SpinnClassifierPredictor,
    TreeNodeClassifierPredictor,
)

__all__ = [
    "ListOpsReader",
    "SpinnClassifier",
    "SpinnClassifierPredictor",
    "SstTreesReader",
    "TextClassificationTransitionsReader",
    "TreeNodeClassifier",
    "TreeNodeClassifierPredictor",
]
