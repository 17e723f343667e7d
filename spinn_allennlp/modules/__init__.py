"""AllenNLP modules over the core: the registered `"spinn"` and `"child_sum_tree_lstm"`
encoders and the interfaces models use to get trees from an encoder (`TreeEncoder` for binary
shift-reduce trees, `DependencyTreeEncoder` for dependency trees); the `TreeNodeEncoder`
interface (every node of a tree as a sequence, for attention models) and its `"spinn"`
implementation; `"padded_lstm"`, AllenNLP's `"lstm"` encoder without packing (faster to train
on a CPU)."""

from spinn_allennlp.modules.child_sum_encoder import ChildSumTreeLSTMEncoder
from spinn_allennlp.modules.dependency_tree_encoder import DependencyTreeEncoder
from spinn_allennlp.modules.padded_lstm import PaddedLstmSeq2VecEncoder
from spinn_allennlp.modules.policy_gradient import PolicyGradient
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.modules.tree_encoder import TreeEncoder
from spinn_allennlp.modules.tree_node_encoder import (
    SpinnTreeNodeEncoder,
    TreeNodeEncoder,
    TreeNodes,
)

__all__ = [
    "ChildSumTreeLSTMEncoder",
    "DependencyTreeEncoder",
    "PaddedLstmSeq2VecEncoder",
    "PolicyGradient",
    "SpinnEncoder",
    "TreeEncoder",
    "SpinnTreeNodeEncoder",
    "TreeNodeEncoder",
    "TreeNodes",
]
