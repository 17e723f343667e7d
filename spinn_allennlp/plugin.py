"""Registers every component of spinn_allennlp with AllenNLP.

`.allennlp_plugins` names this module, and AllenNLP imports plugins non-recursively, so it
imports every module that registers something. (`--include-package spinn_allennlp` imports
everything recursively and needs nothing from here.) `import spinn_allennlp` imports it.
"""

from spinn_allennlp.classification import (
    ListOpsReader,
    SpinnClassifier,
    SpinnClassifierPredictor,
    SstTreesReader,
    TextClassificationTransitionsReader,
    TreeNodeClassifier,
    TreeNodeClassifierPredictor,
)
from spinn_allennlp.data.tokenizers import PtbSpacyTokenizer
from spinn_allennlp.data.tree_sources import (
    BalancedTrees,
    BeneparTrees,
    GoldTrees,
    LeftBranchingTrees,
    RightBranchingTrees,
    SpinnParserTrees,
    TreeSource,
)
from spinn_allennlp.modules import (
    ChildSumTreeLSTMEncoder,
    SpinnEncoder,
    SpinnTreeNodeEncoder,
    TreeNodeEncoder,
)
from spinn_allennlp.pair_classification import (
    EsimNli,
    HimNli,
    SnliTransitionsReader,
    SpinnNliClassifier,
    SpinnNliPredictor,
    TreeEsimNli,
)
from spinn_allennlp.predictors.predict_command import (
    number_input_lines,
    read_whole_files_with_archives,
)
from spinn_allennlp.relatedness import SickReader, TreeRelatedness, TreeRelatednessPredictor
from spinn_allennlp.training import (
    MeanSquaredError,
    ParseMetrics,
    ParserTemperatureSchedule,
    ReduceOnPlateau,
    RestoreRandomState,
    SelfTransitionSchedule,
    Share,
    StepDecayPerBatch,
)

# Under `allennlp predict`, our predictors log a bad input with its line in the input file.
number_input_lines()
# Under `allennlp evaluate` and `predict`, an archive's reader reads the whole input file.
read_whole_files_with_archives()

__all__ = [
    "ListOpsReader",
    "SpinnClassifier",
    "SpinnClassifierPredictor",
    "PtbSpacyTokenizer",
    "TreeSource",
    "BalancedTrees",
    "LeftBranchingTrees",
    "RightBranchingTrees",
    "GoldTrees",
    "BeneparTrees",
    "SpinnParserTrees",
    "SpinnEncoder",
    "TreeNodeEncoder",
    "SpinnTreeNodeEncoder",
    "ChildSumTreeLSTMEncoder",
    "SnliTransitionsReader",
    "SpinnNliClassifier",
    "EsimNli",
    "TreeEsimNli",
    "HimNli",
    "SpinnNliPredictor",
    "SstTreesReader",
    "TextClassificationTransitionsReader",
    "TreeNodeClassifier",
    "TreeNodeClassifierPredictor",
    "SickReader",
    "TreeRelatedness",
    "TreeRelatednessPredictor",
    "MeanSquaredError",
    "ParseMetrics",
    "ReduceOnPlateau",
    "RestoreRandomState",
    "ParserTemperatureSchedule",
    "SelfTransitionSchedule",
    "Share",
    "StepDecayPerBatch",
]
