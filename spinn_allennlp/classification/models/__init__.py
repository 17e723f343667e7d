from spinn_allennlp.classification.models.spinn_classifier import SpinnClassifier
from spinn_allennlp.classification.models.tree_node_classifier import TreeNodeClassifier

__all__ = ["SpinnClassifier", "TreeNodeClassifier"]
