"""AllenNLP modules over the core: the registered `"spinn"` encoder and the `TreeEncoder`
interface models use to get trees from an encoder."""

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.modules.tree_encoder import TreeEncoder

__all__ = ["SpinnEncoder", "TreeEncoder"]
