"""Pure-PyTorch SPINN core: no AllenNLP import anywhere below this package (a test checks it),
so the encoder runs, is tested and is benchmarked with torch alone.

The model and a pass through it:

* ``spinn`` — ``Spinn``: builds the parts from its options and checks them, takes a policy,
  picks a runner (``pick_runner``)
* ``rules`` — the rule book: every rule that rejects a combination of settings, the core's and
  the plugin's, written once
* ``batch`` — the prepared batch every runner starts from: the checks of the word vectors,
  mask and transitions, the sentences longest first, the tape laid out with the leaves written
* ``tape`` — the write-once tape, the thin stack's memory, with its own O(rows) backward
* ``parts`` — the model's layers as a runner sees them (``SpinnParts``), and the one place
  where the composition's extra input is assembled
* ``compositions`` — what a REDUCE computes (TreeLSTM, TreeRNN, GRC), one module each,
  registered by name
* ``cells`` — the other layers: the buffer's projection (eq. 4), the tracker and its
  transition classifier (eq. 5), the stack and buffer summaries
* ``loop_linear`` — one weight-gradient product per layer for a whole loop
* ``policies`` — what decides each step's transition: given, greedy, mixed, sampled, replayed,
  soft, straight-through Gumbel, beam search and beam mixture; ``policy_registry``: policies by
  name, for configs (``names``: the registry kind it and ``compositions`` share)
* ``runners`` — thin stack (Algorithm 1), level-wise (PI-NT), soft stack (NSHRDLU Models
  3-4), beam search and beam mixture
* ``fused`` — the thin stack's step as fused Triton kernels: the GPU runner
* ``graphs`` — CUDA graphs of a pass, captured once per bucket and replayed; ``buckets``: the
  length buckets a batch is padded to
* ``output`` — ``SpinnOutput`` and the transition modes
* ``parser_network`` — a parser with a network of its own (disjoint syntax and semantics)

Training the parser and scoring its trees:

* ``supervision`` — the transition loss against gold trees (eq. 7), the REDUCE type loss, the
  soft stack's strength entropy; what the parser would have done at each step
* ``policy_gradient_losses`` — REINFORCE's and PPO's surrogate losses and their advantages
* ``gradient_hooks`` — a loss carried into any backward pass through a tensor
  (``attach_loss``), and a probe of whether a gradient reached a parameter
* ``tree_scores`` — bracket F1 of a tree against a gold tree, per sentence or over a corpus

Trees, another tree encoder, and the tests' helpers:

* ``transitions`` — binary parses <-> tokens + SHIFT/REDUCE transitions <-> trees, each a
  fold over the transitions (pure Python)
* ``child_sum`` — the Child-Sum Tree-LSTM over dependency trees, one tree level at a time
* ``testing`` — reference implementations, random trees, tolerances, memory accounting
"""

from spinn_core import transitions
from spinn_core.batch import PreparedBatch, prepare_batch
from spinn_core.cells import BufferProjection, Tracker
from spinn_core.child_sum import ChildSumTreeLSTM, DependencyOutput
from spinn_core.compositions import (
    Composition,
    GRCComposition,
    TreeLSTMComposition,
    TreeRNNComposition,
    register_composition,
    registered_compositions,
)
from spinn_core.output import GIVEN, MIXED, PREDICTED, SAMPLED, SOFT, Mode, SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import (
    Choice,
    Given,
    Greedy,
    Mixed,
    PolicyTraits,
    Replayed,
    Sampled,
    SoftStrengths,
    Step,
    StraightThroughGumbel,
    TransitionPolicy,
)
from spinn_core.runners import run_levelwise, run_soft_stack, run_thin_stack
from spinn_core.spinn import Spinn
from spinn_core.tape import WriteOnceTape

__all__ = [
    "transitions",
    "PreparedBatch",
    "prepare_batch",
    "BufferProjection",
    "Tracker",
    "TreeLSTMComposition",
    "TreeRNNComposition",
    "GRCComposition",
    "Composition",
    "register_composition",
    "registered_compositions",
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
    "PolicyTraits",
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
