from spinn_allennlp.data.tree_sources.benepar_trees import BeneparTrees, resolve_benepar_model
from spinn_allennlp.data.tree_sources.gold_trees import GoldTrees
from spinn_allennlp.data.tree_sources.spinn_trees import SpinnParserTrees
from spinn_allennlp.data.tree_sources.tree_source import (
    INVALID_TREE,
    NO_TREE,
    BalancedTrees,
    LeftBranchingTrees,
    RightBranchingTrees,
    TreeSource,
    TreeSourceError,
)

__all__ = [
    "BalancedTrees",
    "BeneparTrees",
    "GoldTrees",
    "INVALID_TREE",
    "LeftBranchingTrees",
    "NO_TREE",
    "RightBranchingTrees",
    "SpinnParserTrees",
    "TreeSource",
    "TreeSourceError",
    "resolve_benepar_model",
]
