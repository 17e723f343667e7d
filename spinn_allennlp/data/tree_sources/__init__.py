from spinn_allennlp.data.tree_sources.tree_source import (
    BalancedTrees,
    LeftBranchingTrees,
    RightBranchingTrees,
    TreeSource,
)

__all__ = ["BalancedTrees", "LeftBranchingTrees", "RightBranchingTrees", "TreeSource"]
