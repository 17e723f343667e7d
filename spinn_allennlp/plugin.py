"""Registers every component of spinn_allennlp with AllenNLP.

`.allennlp_plugins` names this module, and AllenNLP imports plugins non-recursively, so it
imports every module that registers something. (`--include-package spinn_allennlp` imports
everything recursively and needs nothing from here.) The package itself does not import this
module, so `spinn_allennlp.core` and `spinn_allennlp.testing` load with torch alone.
"""

from spinn_allennlp.classification import ListOpsReader, SpinnClassifier
from spinn_allennlp.data.tokenizers import PtbSpacyTokenizer
from spinn_allennlp.data.tree_sources import (
    BalancedTrees,
    LeftBranchingTrees,
    RightBranchingTrees,
    TreeSource,
)
from spinn_allennlp.modules import SpinnEncoder, SpinnTreeNodeEncoder, TreeNodeEncoder
from spinn_allennlp.pair_classification import (
    EsimNli,
    HimNli,
    SnliTransitionsReader,
    SpinnNliClassifier,
    SpinnNliPredictor,
    TreeEsimNli,
)
from spinn_allennlp.training import (
    ParseMetrics,
    SelfTransitionSchedule,
    Share,
    StepDecayPerBatch,
)

__all__ = [
    "ListOpsReader",
    "SpinnClassifier",
    "PtbSpacyTokenizer",
    "TreeSource",
    "BalancedTrees",
    "LeftBranchingTrees",
    "RightBranchingTrees",
    "SpinnEncoder",
    "TreeNodeEncoder",
    "SpinnTreeNodeEncoder",
    "SnliTransitionsReader",
    "SpinnNliClassifier",
    "EsimNli",
    "TreeEsimNli",
    "HimNli",
    "SpinnNliPredictor",
    "ParseMetrics",
    "SelfTransitionSchedule",
    "Share",
    "StepDecayPerBatch",
]
