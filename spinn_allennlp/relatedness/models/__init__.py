from spinn_allennlp.relatedness.models.tree_relatedness import TreeRelatedness, sparse_target

__all__ = ["TreeRelatedness", "sparse_target"]
