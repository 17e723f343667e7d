"""Pure-PyTorch SPINN core: no AllenNLP import anywhere below this package (a test checks it),
so the encoder runs, is tested and is benchmarked with torch alone.

* ``transitions`` — binary parses <-> tokens + SHIFT/REDUCE transitions <-> trees (pure Python)
* ``batching`` — the mask rule, the default tree, transition checks
* ``batch`` — the prepared batch every runner starts from: checks, order, tape and leaves
* ``tape`` — the write-once memory of the thin stack, with its own O(rows) backward
* ``cells`` — buffer projection (eq. 4), TreeLSTM / TreeRNN composition, tracker (eq. 5)
* ``parts`` — the model's layers as a runner sees them; the composition's extra input
* ``policies`` — what decides each step's transition: given, greedy, mixed, sampled, soft,
  straight-through Gumbel
* ``runners`` — thin stack (Algorithm 1), level-wise (PI-NT), soft stack (NSHRDLU Models 3-4)
* ``options`` — which settings go together, checked in one place
* ``spinn`` — ``Spinn``: builds the parts from its options, picks a runner and a policy
* ``child_sum`` — the Child-Sum Tree-LSTM over dependency trees, one tree level at a time
* ``output`` — ``SpinnOutput`` and the transition modes
"""

from spinn_core import transitions
from spinn_core.batch import PreparedBatch, WriteOnceTape, prepare_batch
from spinn_core.cells import (
    BufferProjection,
    SpinnParts,
    Tracker,
    TreeLSTMComposition,
    TreeRNNComposition,
)
from spinn_core.child_sum import ChildSumTreeLSTM, DependencyOutput
from spinn_core.output import GIVEN, MIXED, PREDICTED, SAMPLED, SOFT, Mode, SpinnOutput
from spinn_core.policies import (
    Choice,
    Given,
    Greedy,
    Mixed,
    Replayed,
    Sampled,
    SoftStrengths,
    Step,
    StraightThroughGumbel,
    TransitionPolicy,
)
from spinn_core.runners import run_levelwise, run_soft_stack, run_thin_stack
from spinn_core.spinn import Spinn

__all__ = [
    "transitions",
    "PreparedBatch",
    "prepare_batch",
    "BufferProjection",
    "Tracker",
    "TreeLSTMComposition",
    "TreeRNNComposition",
    "ChildSumTreeLSTM",
    "DependencyOutput",
    "GIVEN",
    "MIXED",
    "PREDICTED",
    "SAMPLED",
    "SOFT",
    "Mode",
    "SpinnOutput",
    "SpinnParts",
    "Choice",
    "Given",
    "Greedy",
    "Mixed",
    "Replayed",
    "Sampled",
    "SoftStrengths",
    "Step",
    "StraightThroughGumbel",
    "TransitionPolicy",
    "run_levelwise",
    "run_soft_stack",
    "run_thin_stack",
    "Spinn",
    "WriteOnceTape",
]
