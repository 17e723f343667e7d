from spinn_allennlp.classification.models.tree_node_classifier import TreeNodeClassifier

__all__ = ["TreeNodeClassifier"]
