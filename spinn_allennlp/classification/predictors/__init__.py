from spinn_allennlp.classification.predictors.spinn_classifier import SpinnClassifierPredictor
from spinn_allennlp.classification.predictors.tree_node_classifier import (
    TreeNodeClassifierPredictor,
)

__all__ = ["SpinnClassifierPredictor", "TreeNodeClassifierPredictor"]
