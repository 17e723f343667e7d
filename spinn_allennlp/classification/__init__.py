"""Sentence classification over trees: the Stanford Sentiment Treebank with a label on every
node (reader "sst_trees", model "tree_node_classifier", predictor "tree_node_classifier")."""

from spinn_allennlp.classification.dataset_readers import SstTreesReader
from spinn_allennlp.classification.models import TreeNodeClassifier
from spinn_allennlp.classification.predictors import TreeNodeClassifierPredictor

__all__ = ["SstTreesReader", "TreeNodeClassifier", "TreeNodeClassifierPredictor"]
