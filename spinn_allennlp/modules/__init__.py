"""AllenNLP modules over the core: the registered `"spinn"` encoder and the `TreeEncoder`
interface models use to get trees from an encoder; the `TreeNodeEncoder` interface (every node
of a tree as a sequence, for attention models) and its `"spinn"` implementation."""

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.modules.tree_encoder import TreeEncoder
from spinn_allennlp.modules.tree_node_encoder import (
    SpinnTreeNodeEncoder,
    TreeNodeEncoder,
    TreeNodes,
)

__all__ = ["SpinnEncoder", "TreeEncoder", "SpinnTreeNodeEncoder", "TreeNodeEncoder", "TreeNodes"]
