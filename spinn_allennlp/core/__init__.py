"""Pure-PyTorch SPINN core: no AllenNLP import anywhere below this package (a test checks it),
so the encoder runs, is tested and is benchmarked with torch alone.

* ``transitions`` — binary parses <-> tokens + SHIFT/REDUCE transitions <-> trees (pure Python)
* ``batching`` — the mask rule, the default tree, transition checks shared by both paths
* ``tape`` — the write-once memory of the thin stack, with its own O(rows) backward
* ``cells`` — buffer projection (eq. 4), TreeLSTM / TreeRNN composition, tracker (eq. 5)
* ``spinn`` — the thin-stack loop (Algorithm 1) with the paper's variants
* ``levelwise`` — SPINN-PI-NT composed one tree level at a time
* ``child_sum`` — the Child-Sum Tree-LSTM over dependency trees, one tree level at a time
* ``output`` — ``SpinnOutput`` and the transition modes
"""

from spinn_allennlp.core import transitions
from spinn_allennlp.core.cells import (
    BufferProjection,
    Tracker,
    TreeLSTMComposition,
    TreeRNNComposition,
)
from spinn_allennlp.core.child_sum import ChildSumTreeLSTM, DependencyOutput
from spinn_allennlp.core.levelwise import levelwise_forward
from spinn_allennlp.core.output import GIVEN, MIXED, PREDICTED, SpinnOutput
from spinn_allennlp.core.spinn import Spinn
from spinn_allennlp.core.tape import WriteOnceTape

__all__ = [
    "transitions",
    "BufferProjection",
    "Tracker",
    "TreeLSTMComposition",
    "TreeRNNComposition",
    "ChildSumTreeLSTM",
    "DependencyOutput",
    "levelwise_forward",
    "GIVEN",
    "MIXED",
    "PREDICTED",
    "SpinnOutput",
    "Spinn",
    "WriteOnceTape",
]
