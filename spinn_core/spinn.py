"""SPINN: a batched thin-stack shift-reduce TreeLSTM (Bowman et al. 2016), with the paper's
variants as parts and the choice of transitions as a policy.

A pass is three things: a prepared batch (``batch.py``: checks, longest-first order, the tape
and its leaves), the model's parts (``parts.SpinnParts``: composition, tracker and parser, REDUCE
types, summaries) and a transition policy (``policies.py``: given trees, the parser's greedy
choice, a mix of the two, samples, soft strengths). A runner (``runners/``) takes the three and
returns a ``SpinnOutput``: the thin stack step by step (Algorithm 1), level by level (PI-NT on
given trees, tree-height calls), or the soft stack (NSHRDLU Models 3-4). The arguments of a
``Spinn`` and the policy of each pass are checked by the rule book (``rules.py``:
``check_options``, ``check_policy``).
"""

import logging
from typing import Callable, Dict, List, Optional, Set

import torch
from torch import nn

from spinn_core.batch import PreparedBatch, prepare_batch
from spinn_core.cells import BufferProjection, Summaries, Tracker
from spinn_core.compositions import CompositionSetting, build_composition
from spinn_core.fused import fused_refusal, run_fused_thin_stack
from spinn_core.output import SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import (
    Given,
    MoveCheckedOnDevice,
    TransitionPolicy,
    beam_start_scores,
    with_move_check,
)
from spinn_core.rules import check_options, check_policy
from spinn_core.runners.beam import run_beam, run_beam_mixture
from spinn_core.runners.levelwise import run_levelwise
from spinn_core.runners.soft_stack import run_soft_stack
from spinn_core.runners.thin_stack import run_thin_stack
from spinn_core.transitions import PAD

logger = logging.getLogger(__name__)

# A runner: a prepared batch, the model's parts and a transition policy in, a SpinnOutput out
# (``runners/``).
Runner = Callable[[PreparedBatch, SpinnParts, TransitionPolicy], SpinnOutput]


def pick_runner(
    policy: TransitionPolicy, parts: SpinnParts, levelwise: bool, inputs: torch.Tensor
) -> Runner:
    """The runner a pass under ``policy`` of a model with ``parts`` over ``inputs`` takes, the
    one place that chooses: the soft stack for soft strengths, the beam runners for a search,
    level by level for given trees without a tracker (``levelwise``: the loop runs tree-height
    times instead of 2N - 1), else the thin stack: on CUDA's static-shape path its fused
    kernels (``fused/``: a launch or two a step) where they implement the pass, otherwise the
    PyTorch step loop, the reason said once (:func:`fused_refusal`). Read off the policy's
    declaration: ``traits.drives``, then ``traits.given``."""
    traits = policy.traits
    if traits.drives != "discrete":
        return _DRIVEN[traits.drives]
    if traits.given == "follows" and parts.tracker is None and levelwise:
        return run_levelwise
    device = inputs.device
    if device.type == "cuda" and parts.uses_static_shapes(device):
        reason = fused_refusal(parts, policy, device, inputs.dtype)
        if reason is None:
            return run_fused_thin_stack
        _say_once(reason)
    return run_thin_stack


# The runner of each PolicyTraits.drives other than "discrete" (the thin stack's, above).
_DRIVEN: Dict[str, Runner] = {
    "soft": run_soft_stack,
    "beam": run_beam,
    "beam_mixture": run_beam_mixture,
}

_SAID: Set[str] = set()


def _say_once(reason: str) -> None:
    if reason not in _SAID:
        _SAID.add(reason)
        logger.warning(
            "the fused GPU runner does not run this pass (%s): the PyTorch step loop runs it",
            reason,
        )


class Spinn(nn.Module):
    """The SPINN encoder core, with the paper's variants as options.

    * ``tracking_dim=0``: SPINN-PI-NT, exactly a TreeLSTM over the given tree (§3.6); composed
      level by level unless ``levelwise=False``.
    * ``tracking_dim>0``: SPINN-PI, the tracking LSTM feeds the composition (§3.3).
    * ``predict_transitions=True`` (needs tracking): full SPINN, with a transition classifier
      (eq. 5) that can drive the parse itself.
    * ``num_reduce_types=K`` (needs tracking): typed REDUCE (NSHRDLU §3.3): each REDUCE has one
      of K types, whose learned embedding (``type_dim``) joins the composition's extra input,
      so the composition depends on the type (through its gates: a type-specific, low-rank
      shift of every gate's pre-activation). With a parser, a type classifier on the tracker's
      state predicts the type of each REDUCE; given types are followed where given transitions
      are.
    * ``composition_reads_tracker=False`` (with tracking): the composition reads the two
      children only, as SPINN-PI-NT's; the tracker is then the parser's own network (as the
      separate parsers of Choi et al. 2018 and Havrylov et al. 2019), so a latent parser's
      trees are the only route from word order to the sentence vector.
    * ``parser_trains_nodes=False`` (with tracking): the tracker reads the nodes' h detached,
      so no gradient passes from the parser back into the nodes: its losses (the transition
      loss, REINFORCE's and PPO's terms) train its own network only, never the composition,
      the leaves or the embeddings, which only the task's loss trains — the disjoint syntax
      and semantics of Havrylov et al. (2019). (With ``composition_reads_tracker`` the task's
      loss then reaches the nodes through the composition alone, not through the tracker.)
      The values computed are the same either way.
    * ``summary_dim>0`` (needs tracking): the tracker also reads LSTM summaries of the whole
      stack and of the whole buffer (NSHRDLU §3.1; ``cells.Summaries``), not only their tops.

    Node inputs (Chen et al. 2017, eq. 3-10): with ``node_input_dim > 0`` every REDUCE also
    takes an input vector of its own, ``node_inputs[:, t]`` for the node made at step t, next
    to the tracker's state in the composition's extra input. ``leaf="cell"`` makes the leaves
    the same cell with no children, taking the word vector as their input (so
    ``node_input_dim == input_dim``), instead of the linear projection of eq. 4.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        tracking_dim: int = 0,
        predict_transitions: bool = False,
        composition: CompositionSetting = "treelstm",
        projection_dropout: float = 0.0,
        projection_batch_norm: bool = False,
        levelwise: bool = True,
        node_input_dim: int = 0,
        leaf: str = "projection",
        num_reduce_types: int = 0,
        type_dim: int = 16,
        summary_dim: int = 0,
        composition_reads_tracker: bool = True,
        parser_trains_nodes: bool = True,
    ) -> None:
        super().__init__()
        check_options(
            input_dim,
            hidden_dim,
            tracking_dim=tracking_dim,
            predict_transitions=predict_transitions,
            composition=composition,
            projection_dropout=projection_dropout,
            projection_batch_norm=projection_batch_norm,
            node_input_dim=node_input_dim,
            leaf=leaf,
            reduce_types=num_reduce_types,
            summary_dim=summary_dim,
            parser_trains_nodes=parser_trains_nodes,
        )
        self.parser_trains_nodes = parser_trains_nodes
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.has_parser = predict_transitions
        self.node_input_dim = node_input_dim
        self.num_reduce_types = num_reduce_types
        type_dim = type_dim if num_reduce_types else 0
        # The composition's extra input: [tracker state; node input; REDUCE type], each may be
        # absent (assembled by SpinnParts.extra_input).
        self.composition_reads_tracker = composition_reads_tracker
        tracker_input_dim = tracking_dim if composition_reads_tracker else 0
        self.compose = build_composition(
            composition, hidden_dim, extra_dim=tracker_input_dim + node_input_dim + type_dim
        )
        self.node_dim = self.compose.node_dim
        self.projection = (
            BufferProjection(input_dim, self.node_dim, projection_dropout, projection_batch_norm)
            if leaf == "projection"
            else None
        )
        self.tracker = (
            Tracker(hidden_dim, tracking_dim, predict_transitions, summary_dim)
            if tracking_dim > 0
            else None
        )
        self.summaries = Summaries(hidden_dim, summary_dim) if summary_dim else None
        self.type_embedding = nn.Embedding(num_reduce_types, type_dim) if num_reduce_types else None
        self.type_classifier = (
            nn.Linear(tracking_dim, num_reduce_types)
            if num_reduce_types and predict_transitions
            else None
        )
        # Given trees and no tracking: compose level by level (runners/levelwise.py), the
        # loop running tree-height times instead of 2N - 1. Same function, same parameters.
        self.levelwise = levelwise
        # See SpinnParts.static_shapes.
        self.static_shapes: Optional[bool] = None

    def parser_parameters(self) -> List[nn.Parameter]:
        """The parameters of the parser's network: the tracker (its transition classifier
        included), the stack and buffer summaries it reads and the REDUCE type classifier;
        none without a parser. (With ``composition_reads_tracker`` the tracker's state also
        feeds the composition: the parser is then not a network of its own.)"""
        if not self.has_parser:
            return []
        modules = [self.tracker, self.summaries, self.type_classifier]
        return [p for module in modules if module is not None for p in module.parameters()]

    def parts(self) -> SpinnParts:
        return SpinnParts(
            leaves=self.leaves,
            compose=self.compose,
            tracker=self.tracker,
            summaries=self.summaries,
            type_embedding=self.type_embedding,
            type_classifier=self.type_classifier,
            static_shapes=self.static_shapes,
            composition_reads_tracker=self.composition_reads_tracker,
            parser_trains_nodes=self.parser_trains_nodes,
        )

    def forward(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
        node_inputs: Optional[torch.Tensor] = None,
        reduce_types: Optional[torch.Tensor] = None,
        policy: Optional[TransitionPolicy] = None,
        runner: Optional[Runner] = None,
    ) -> SpinnOutput:
        """Encodes a batch.

        inputs: (B, N, input_dim) word vectors; mask: (B, N), True on real words, which come
        first in each row. transitions: (B, T') with SHIFT/REDUCE/PAD: the trees a policy that
        follows given transitions composes over (the balanced binary tree when None), what a
        mixing policy mixes with, and the soft stack's one-hot strengths when given.
        ``policy`` decides the transitions (``policies.py``; default ``Given()``: the given
        trees, the balanced binary tree where none is given).
        ``node_inputs``: (B, T'', node_input_dim), T'' at least the number of steps taken;
        column t is the input of the node made at step t (read at REDUCEs). Required exactly
        when ``node_input_dim > 0``. ``reduce_types``: (B, T') the type of each given REDUCE
        (-1 elsewhere), for a model with typed REDUCE. ``runner`` overrides the choice of
        runner (tests and benchmarks compare them).
        """
        policy = self.checked_policy(
            policy if policy is not None else Given(), transitions, reduce_types, node_inputs
        )
        typed = bool(self.num_reduce_types)
        parts = self.parts()
        batch = prepare_batch(
            inputs,
            mask,
            self.leaves,
            self.node_dim,
            transitions,
            follow_given=policy.follows_given,
            reduce_types=reduce_types if typed else None,
            node_inputs=node_inputs,
            return_nodes=return_nodes,
            full_trees=policy.soft,
            dense=parts.uses_static_shapes(inputs.device),
            forests=policy.left_padded,
        )
        if batch.total_steps == 0:
            return self._empty_output(batch, policy)
        runner = runner or pick_runner(policy, parts, self.levelwise, inputs)
        output = runner(batch, parts, policy)
        if isinstance(policy, MoveCheckedOnDevice):
            policy.raise_if_illegal()  # its moves' check: one host read per pass
        return output

    def checked_policy(
        self,
        policy: TransitionPolicy,
        transitions: Optional[torch.Tensor],
        reduce_types: Optional[torch.Tensor],
        node_inputs: Optional[torch.Tensor],
    ) -> TransitionPolicy:
        """``policy`` as a pass follows it, checked against the model and the pass's inputs
        (:func:`check_policy`: an error naming what is missing). A policy written
        elsewhere has its moves checked (an illegal one is an error that names it); this
        package's are legal by construction."""
        policy = with_move_check(policy)
        check_policy(
            policy,
            has_parser=self.has_parser,
            has_type_classifier=self.type_classifier is not None,
            num_reduce_types=self.num_reduce_types,
            node_input_dim=self.node_input_dim,
            has_summaries=self.summaries is not None,
            transitions_given=transitions is not None,
            reduce_types_given=reduce_types is not None,
            node_inputs_given=node_inputs is not None,
        )
        return policy

    def _empty_output(self, batch: PreparedBatch, policy: TransitionPolicy) -> SpinnOutput:
        """The output of a batch with no steps (no sentences, or only empty ones): zero
        sentence vectors, read from the tape's zero rows."""
        batch_size = batch.batch_size
        hidden = self.compose.hidden
        output = SpinnOutput(
            hidden(batch.tape.read(batch.base)),
            transitions=torch.full((batch_size, 0), PAD, dtype=torch.long, device=batch.device),
            mode=policy.mode,
        )
        if policy.searches:
            output.beam_log_probs = batch.inputs.new_zeros(batch_size)  # the empty tree's
        if policy.mixes:
            # (The width of the policy, or of the one it wraps: policies.MoveChecked.)
            width = int(getattr(getattr(policy, "policy", policy), "width", 1))
            output.beam_scores = beam_start_scores(batch_size * width, width, batch.inputs).view(
                batch_size, width
            )
            output.beam_transitions = output.transitions.unsqueeze(1).expand(-1, width, -1)
        if batch.return_nodes:
            output.node_states = batch.tape.read(batch.base[:0]).view(batch_size, 0, self.node_dim)
            output.node_hidden = hidden(output.node_states)
        return output

    def leaves(self, inputs: torch.Tensor, mask: torch.Tensor, dense: bool = False) -> torch.Tensor:
        """The buffer: the node state of every real word, shape (num_real_tokens, node_dim) in
        ``mask`` order. Eq. 4's projection, or (``leaf="cell"``) the composition with zero
        children and the word vector as the node's input. ``dense``: the rows of every
        position, (B * N, node_dim), padding read as zero vectors (and kept out of batch
        statistics): shapes that do not depend on the mask's values."""
        if self.projection is not None:
            return self.projection(inputs, mask, dense=dense)
        if dense:
            real = mask.bool().unsqueeze(-1)
            return self.compose.leaf(torch.where(real, inputs, 0).flatten(0, 1))
        return self.compose.leaf(inputs[mask.bool()])
