from spinn_allennlp.classification.predictors.tree_node_classifier import (
    TreeNodeClassifierPredictor,
)

__all__ = ["TreeNodeClassifierPredictor"]
