import contextlib
import dataclasses
import logging
from typing import Any, Dict, List, Optional

import torch
from allennlp.data import Vocabulary
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.modules.input_checks import word_mask
from spinn_allennlp.modules.own_parser import OwnParser
from spinn_allennlp.modules.tree_encoder import (
    TreeEncoder,
    given_trees,
    gold_like,
    merge_rows,
    rows_without_trees,
    with_default_trees,
)
from spinn_core.batching import check_transitions_tensor
from spinn_core.options import check_options
from spinn_core.output import SpinnOutput
from spinn_core.parser_network import ParserNetwork
from spinn_core.policies import (
    BeamSearch,
    Given,
    Greedy,
    Mixed,
    SoftStrengths,
    StraightThroughGumbel,
    TransitionPolicy,
)
from spinn_core.policy_registry import policy_from_config
from spinn_core.spinn import Spinn
from spinn_core.supervision import (
    GradientProbe,
    attach_loss,
    strength_entropy,
    transition_loss,
)

logger = logging.getLogger(__name__)

# Training batches after which a parser that has received no gradient is reported.
UNTRAINED_PARSER_BATCHES = 20

# The encoder's `mixed_precision` values and the autocast dtype of each.
MIXED_PRECISION: Dict[Optional[str], Optional[torch.dtype]] = {None: None, "bf16": torch.bfloat16}


def _float32_outputs(output: SpinnOutput) -> SpinnOutput:
    """``output`` with its floating-point tensors in float32 (under autocast the parser's
    logits, and what a policy computes from them, come out in bf16)."""
    output = dataclasses.replace(output)
    for field in dataclasses.fields(output):
        value = getattr(output, field.name)
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            setattr(output, field.name, value.float())
    return output


@Seq2VecEncoder.register("spinn")
class SpinnEncoder(TreeEncoder):
    """SPINN (Bowman et al. 2016): encodes a sentence by shift-reduce TreeLSTM composition over a
    binary tree, with a thin stack batched over sentences.

    Which tree: the `transitions` passed to `forward`/`encode` (gold parses from a reader such as
    `snli_transitions`); with `predict_transitions`, the encoder's own parser when no
    transitions are given, and at evaluation time unless `parse_at_test_time` is false; with
    neither, the balanced binary tree over the words. So `"type": "spinn"` also works in
    configs that know nothing of trees (`basic_classifier`).

    The paper's variants (Table 3): `tracking_dim = 0` is SPINN-PI-NT (exactly a TreeLSTM);
    `tracking_dim > 0` is SPINN-PI; adding `predict_transitions = true` gives the full SPINN.

    Input shape: (batch_size, num_tokens, input_dim) with a mask of real tokens first (`None`:
    every position is a word, as in AllenNLP's own encoders); output shape: (batch_size,
    hidden_dim). `encode` returns the whole `SpinnOutput`.

    Registered as a `Seq2VecEncoder` with name "spinn".

    # Parameters

    input_dim : `int`
        Size of the word vectors.
    hidden_dim : `int`
        D, the size of a tree node's h (and c): the output size.
    tracking_dim : `int`, optional (default = `0`)
        Size of the tracking LSTM (§3.3); 0 for none.
    predict_transitions : `bool`, optional (default = `False`)
        A transition classifier on the tracker's state (eq. 5); needs `tracking_dim > 0`.
        Something must train it with gold transitions: a model that calls `encode` and adds
        `core.supervision.transition_loss` (as `spinn_nli` does), or this encoder itself with
        `transition_loss_weight` when gold transitions reach `forward`. If no gradient has
        reached the parser after 20 training batches, a warning says so (once).
    parse_at_test_time : `bool`, optional (default = `True` with a parser)
        With a parser: follow its own parse at evaluation even when gold transitions are given.
        Setting it on an encoder without a parser is an error (it would not be read).
    self_transition_prob : `float`, optional (default = `0.0`)
        With a parser, in training: the chance per step of following its own prediction instead
        of the gold transition (NSHRDLU Model 2; the `self_transition_schedule` callback moves
        it from teacher forcing to the model's own predictions during training).
    soft_stack : `bool`, optional (default = `False`)
        With a parser: run on a soft stack and buffer whose strengths are the parser's
        probabilities (`core/soft_stack.py`), so the task's loss reaches the parser (NSHRDLU
        Models 3 and 4; whether the model also trains the parser on gold transitions is the
        model's `transition_loss_weight`). Given transitions are never followed; the output's
        `transitions` are the discrete tree the soft pass prefers.
    soft_at_test_time : `bool`, optional (default = `True` with `soft_stack`)
        With `soft_stack`: run the soft stack at evaluation too; false runs the discrete stack
        on the parser's greedy choices instead. Setting it without `soft_stack`, or to true
        with `gumbel_straight_through` (which always evaluates on the discrete stack), is an
        error.
    composition : `str`, optional (default = `"treelstm"`)
        `"treelstm"` (eq. 1-3) or `"treernn"` (the blog post's tanh layer).
    projection_dropout : `float`, optional (default = `0.0`)
        Drop rate on the projected words (eq. 4).
    projection_batch_norm : `bool`, optional (default = `False`)
        Batch normalisation of the projected words, over real tokens only.
    levelwise : `bool`, optional (default = `True`)
        SPINN-PI-NT with given transitions: compose one tree level at a time, batch-wide
        (same function, fewer and larger calls).
    reduce_types : `int`, optional (default = `0`)
        Typed REDUCE (NSHRDLU §3.3), with tracking: the number of REDUCE types (e.g. 8 for the
        `snli_transitions` reader's `reduce_types`). Each type has a learned embedding that
        joins the composition's input next to the tracker's state, so the composition depends
        on the type through its gates (a type-specific shift of every gate; one weight slice
        per type would multiply the composition's parameters by the number of types and starve
        the rare ones). With a parser, a classifier on the tracker's state predicts the type
        (train it with `core.supervision.reduce_type_loss`).
    type_dim : `int`, optional (default = `16`)
        Size of the type embedding.
    parser_temperature : `float`, optional (default = `1.0`)
        With `soft_stack`: the strengths are the parser's softmax at this temperature; the
        `parser_temperature_schedule` callback anneals it, so that the strengths approach 0 and
        1 and the soft pass comes to follow one tree.
    strength_entropy_weight : `float`, optional (default = `0.0`)
        With `soft_stack`, in training: adds this weight times the mean binary entropy of the
        strengths (over the batch's steps) to whatever loss the model backpropagates through
        the sentence vectors, pushing each step towards a clear SHIFT or REDUCE.
    gumbel_straight_through : `bool`, optional (default = `False`)
        With `soft_stack`, in training: straight-through Gumbel-softmax instead of soft
        strengths (`core.policies.StraightThroughGumbel`): each step's move is drawn from the
        parser's softmax and followed exactly (strengths 0 or 1, a discrete stack), while the
        gradient is that of the Gumbel softmax at `parser_temperature`. Evaluation runs the
        discrete stack on the parser's greedy moves (`soft_at_test_time` is not read).
    composition_reads_tracker : `bool`, optional (default = `True`)
        With tracking: whether the tracker's state joins the composition's input (§3.3). False
        makes the composition a plain TreeLSTM over the two children, and the tracker the
        parser's own network: for a parser that learns from the task alone, the trees are then
        the only way word order reaches the sentence vector (a tracker feeding every node can
        carry it past any tree, right-branching ones included).
    parser_trains_nodes : `bool`, optional (default = `True`)
        With tracking: whether gradients pass from the tracker back into the nodes it reads
        (the words' and the stack's vectors). False detaches them: the parser's losses (the
        transition loss, REINFORCE's and PPO's terms) then train the parser's own network only,
        never the composition, the leaf projection or the embeddings, which only the task's
        loss trains (Havrylov et al. 2019's disjoint syntax and semantics). For a parser
        trained by the task alone: otherwise its term also sharpens the nodes it reads, at the
        composition's larger learning rate. The values computed do not change.
    summary_dim : `int`, optional (default = `0`)
        With tracking: the tracker also reads LSTM summaries of the whole stack (a stack LSTM,
        as Dyer et al. 2015) and of the whole buffer, each of this size (NSHRDLU §3.1); 0 for
        the paper's three inputs only. Not with `soft_stack`.
    transition_loss_weight : `float`, optional (default = `0.0`)
        With a parser: when gold transitions reach `forward` in training, the encoder adds this
        weight times the transition loss (eq. 7's term, averaged over steps) to whatever loss
        the model backpropagates through the sentence vectors. So any model whose reader gives
        the encoder `transitions` trains the parser with no code of its own. (The reported
        loss does not include it.) Leave 0 when the model adds the loss itself, as `spinn_nli`
        does through `encode`.
    beam_size : `int`, optional (default = `1`)
        With a parser, at evaluation: where the encoder follows its own parse, the most
        probable tree a beam search of this width finds (`core.runners.beam`) instead of the
        greedy one; 1 is greedy. Costs about `beam_size` + 1 greedy passes. Training is not
        affected, so a trained model can be evaluated with a beam by overriding it:
        `allennlp evaluate ... --overrides '{"model.encoder.beam_size": 4}'` (for `spinn_nli`
        and `spinn_classifier`, whose encoder is `model.encoder`).
    parser : `OwnParser`, optional (default = `None`)
        A parser with a network of its own (`modules/own_parser.py`): it chooses the trees
        (as `predict_transitions` would, which stays false), and the encoder's own layers are
        the task's composition alone, following its trees: level by level for SPINN-PI-NT.
        Its parameters are `parser_parameters()` (`_encoder.parser.` in a model's parameter
        names).
    training_policy : `Dict[str, Any]`, optional (default = `None`)
        The transition policy the encoder follows in training, instead of the one its other
        settings choose: `{"type": NAME, ...its arguments}`, NAME one of `"given"`,
        `"greedy"`, `"beam_search"` (`width`), `"mixed"` (`self_transition_prob`),
        `"sampled"` (`temperature`), `"soft"`, `"straight_through_gumbel"`, or a policy of
        your own registered with `core.policy_registry.register_policy` (docs/design.md).
        A model's `policy_gradient` chooses the training trees itself: not with it.
    evaluation_policy : `Dict[str, Any]`, optional (default = `None`)
        The same at evaluation and prediction (instead of the greedy parse, the beam, the
        soft stack or the given trees).
    vocab : `Vocabulary`, optional (default = `None`)
        Given by AllenNLP; read only by a `parser` with embeddings of its own (their size).
    mixed_precision : `str`, optional (default = `None`)
        `"bf16"`: the encoder's passes run under `torch.autocast` with bfloat16, in training and
        evaluation: matrix products take bf16 operands (8 significant bits) and add up in
        float32; the tape of node states, the cells' elementwise arithmetic and every output
        stay float32. Faster where the CPU multiplies bf16 natively (AVX512-BF16, as the
        project's machines: see docs/speed.md) or on a GPU. A training option whose accuracy
        against float32 is yet to be shown (docs/speed.md gives the runs that would show it).
    cuda_graphs : `bool`, optional (default = `False`)
        On CUDA: replay each pass from CUDA graphs captured once per length bucket
        (`core/graphs.py`): batches padded to `graph_batch_size` sentences and their longest
        sentence to the next of a few length edges (padding changes no result), the loop's
        kernels launched by one graph instead of one by one from Python. Passes a graph cannot
        replay (beam search, PPO's replays, the level-wise PI-NT, batches past the largest
        bucket) and the CPU run as before. Off by default until GPU runs have shown it exact.
    graph_batch_size : `int`, optional (default = `None`)
        With `cuda_graphs`: the size every batch is padded to (the data loader's batch size,
        twice it for premise-hypothesis pairs); None pads to the next power of two.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        tracking_dim: int = 0,
        predict_transitions: bool = False,
        parse_at_test_time: Optional[bool] = None,
        self_transition_prob: float = 0.0,
        soft_stack: bool = False,
        soft_at_test_time: Optional[bool] = None,
        composition: str = "treelstm",
        projection_dropout: float = 0.0,
        projection_batch_norm: bool = False,
        levelwise: bool = True,
        transition_loss_weight: float = 0.0,
        reduce_types: int = 0,
        type_dim: int = 16,
        summary_dim: int = 0,
        parser_temperature: float = 1.0,
        strength_entropy_weight: float = 0.0,
        mixed_precision: Optional[str] = None,
        gumbel_straight_through: bool = False,
        composition_reads_tracker: bool = True,
        parser_trains_nodes: bool = True,
        beam_size: int = 1,
        cuda_graphs: bool = False,
        graph_batch_size: Optional[int] = None,
        parser: Optional[OwnParser] = None,
        training_policy: Optional[Dict[str, Any]] = None,
        evaluation_policy: Optional[Dict[str, Any]] = None,
        vocab: Optional[Vocabulary] = None,
    ) -> None:
        super().__init__()
        if beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {beam_size}")
        if beam_size > 1 and not (predict_transitions or parser):
            raise ValueError(
                "beam_size > 1 searches over the parser's transitions: it needs "
                "predict_transitions=true or a parser"
            )
        if mixed_precision not in MIXED_PRECISION:
            raise ValueError(
                f"mixed_precision must be one of {[k for k in MIXED_PRECISION if k]} or null, "
                f"got {mixed_precision!r}"
            )
        check_options(
            input_dim,
            hidden_dim,
            tracking_dim=tracking_dim,
            predict_transitions=predict_transitions,
            composition=composition,
            projection_dropout=projection_dropout,
            projection_batch_norm=projection_batch_norm,
            reduce_types=reduce_types,
            summary_dim=summary_dim,
            self_transition_prob=self_transition_prob,
            soft_stack=soft_stack,
            transition_loss_weight=transition_loss_weight,
            parser_temperature=parser_temperature,
            strength_entropy_weight=strength_entropy_weight,
            gumbel_straight_through=gumbel_straight_through,
            has_own_parser=parser is not None,
        )
        _check_evaluation_settings(
            parse_at_test_time,
            soft_at_test_time,
            has_parser=predict_transitions or parser is not None,
            soft_stack=soft_stack,
            gumbel_straight_through=gumbel_straight_through,
        )
        self.parser = _parser_network(parser, input_dim, vocab) if parser is not None else None
        self.spinn = Spinn(
            input_dim=input_dim,
            hidden_dim=hidden_dim,
            tracking_dim=tracking_dim,
            predict_transitions=predict_transitions,
            composition=composition,
            projection_dropout=projection_dropout,
            projection_batch_norm=projection_batch_norm,
            levelwise=levelwise,
            num_reduce_types=reduce_types,
            type_dim=type_dim,
            summary_dim=summary_dim,
            composition_reads_tracker=composition_reads_tracker,
            parser_trains_nodes=parser_trains_nodes,
        )
        self.parse_at_test_time = parse_at_test_time is not False
        self.self_transition_prob = self_transition_prob
        self.soft_stack = soft_stack
        self.soft_at_test_time = soft_at_test_time is not False
        self.transition_loss_weight = transition_loss_weight
        self.parser_temperature = parser_temperature
        self.strength_entropy_weight = strength_entropy_weight
        self.mixed_precision = mixed_precision
        self.gumbel_straight_through = gumbel_straight_through
        self.beam_size = beam_size
        self.training_policy = _configured_policy(
            "training_policy",
            training_policy,
            self.has_parser,
            overridden={
                "self_transition_prob": self_transition_prob > 0,
                "gumbel_straight_through": gumbel_straight_through,
            },
        )
        self.evaluation_policy = _configured_policy(
            "evaluation_policy",
            evaluation_policy,
            self.has_parser,
            overridden={
                "beam_size": beam_size > 1,
                "parse_at_test_time": parse_at_test_time is not None,
                "soft_at_test_time": soft_at_test_time is not None,
            },
        )
        if cuda_graphs:
            self.spinn.use_cuda_graphs(batch_size=graph_batch_size)
        # Whether anything trains the parser: set by a gradient reaching its weights.
        self._parser_probe = GradientProbe()
        self._training_passes = 0
        self._reported_default_trees = False

    @property
    def has_parser(self) -> bool:
        return self.parser is not None or self.spinn.has_parser

    @property
    def parser_learns_from_task(self) -> bool:
        """Whether the task's loss reaches the parser through the encoder itself (the soft
        stack, straight-through Gumbel, a training policy such as `beam_mixture`), with no
        loss of the model's for it."""
        trains = self.training_policy is not None and self.training_policy.learns_from_task
        return self.has_parser and (self.soft_stack or trains)

    @property
    def parser_reads_token_ids(self) -> bool:
        """Whether the parser embeds token ids of its own (a `parser` block with
        `embedding_dim`): `encode` then needs `parser_tokens`."""
        return self.parser is not None and self.parser.reads_token_ids

    def parser_parameters(self) -> List[torch.nn.Parameter]:
        """The parser's parameters: the whole `parser` network when there is one, else
        `Spinn.parser_parameters()` (the tracker with its classifiers; none without a
        parser). What PPO's further updates move and `parser_warmup` freezes."""
        if self.parser is not None:
            return list(self.parser.parameters())
        return self.spinn.parser_parameters()

    @property
    def parser_frozen(self) -> bool:
        """Whether the parser's parameters (`parser_parameters()`) are frozen (`requires_grad`
        off): set by the `parser_warmup` callback, or by hand."""
        return not any(p.requires_grad for p in self.parser_parameters())

    @parser_frozen.setter
    def parser_frozen(self, frozen: float) -> None:
        for parameter in self.parser_parameters():
            parameter.requires_grad_(not frozen)

    @property
    def num_reduce_types(self) -> int:
        return self.spinn.num_reduce_types

    def get_input_dim(self) -> int:
        return self.spinn.input_dim

    def get_output_dim(self) -> int:
        return self.spinn.hidden_dim

    def policy(self, has_transitions: bool) -> TransitionPolicy:
        """The transition policy `encode` follows, given whether gold transitions were passed
        and whether the encoder is training (see the table in docs/design.md): the config's
        `training_policy` / `evaluation_policy` when set, else what the other settings say."""
        configured = self.training_policy if self.training else self.evaluation_policy
        if configured is not None:
            return configured
        if not self.has_parser:
            return Given()  # gold, or the balanced default tree
        if self.soft_stack:
            if self.training and self.gumbel_straight_through:
                return StraightThroughGumbel(self.parser_temperature)
            if self.training or (self.soft_at_test_time and not self.gumbel_straight_through):
                return SoftStrengths(self.parser_temperature)
            return self._own_parse()
        if not has_transitions:
            return self._own_parse()
        if self.training:
            return Mixed(self.self_transition_prob) if self.self_transition_prob > 0 else Given()
        return self._own_parse() if self.parse_at_test_time else Given()

    def _own_parse(self) -> TransitionPolicy:
        """The parser's own tree: greedy, or at evaluation a beam search of `beam_size`."""
        if self.beam_size > 1 and not self.training:
            return BeamSearch(self.beam_size)
        return Greedy()

    def transition_mode(self, has_transitions: bool) -> str:
        """The mode of :meth:`policy`: "given", "predicted", "mixed" or "soft"."""
        return self.policy(has_transitions).mode

    def encode(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        transitions: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
        reduce_types: Optional[torch.Tensor] = None,
        policy: Optional[TransitionPolicy] = None,
        parser_tokens: Optional[torch.Tensor] = None,
    ) -> SpinnOutput:
        """The whole `SpinnOutput` of a pass: the sentence vectors, the transitions followed,
        the parser's logits (with a parser) and, with `return_nodes`, every node's state.
        `policy` overrides the encoder's own choice of transitions (`core/policies.py`), e.g.
        `Sampled()` while a latent parser trains by REINFORCE. Training the parser is the
        caller's job here (see `transition_loss_weight`). `parser_tokens`: (batch_size,
        num_tokens) token ids, for a `parser` with embeddings of its own."""
        mask = word_mask(self, inputs, mask)
        if self.parser_reads_token_ids and parser_tokens is None:
            raise ValueError(
                "this encoder's parser embeds token ids of its own (parser.embedding_dim > 0): "
                "pass parser_tokens (the models spinn_classifier and spinn_nli do), or set "
                "parser.embedding_dim to 0 to let it read the word vectors"
            )
        if transitions is not None:
            # Before anything reads them: a wrong shape is a ValueError naming it, not an
            # index error of torch's further down.
            check_transitions_tensor(transitions, inputs.size(0))
        transitions = given_trees(transitions)
        if transitions is not None and not self.has_parser:
            # Sentences without a tree in a batch with trees: the balanced default tree.
            transitions = with_default_trees(transitions, mask)
        if policy is None:
            policy = self.policy(transitions is not None)
        missing = None
        if transitions is not None and (policy.follows_given or policy.needs_given):
            missing = rows_without_trees(transitions, mask)
        if transitions is not None and missing is not None and bool(missing.any()):
            # A parser that follows given trees: the sentences without one follow its own
            # parse, in a pass of their own.
            have = (~missing).nonzero().squeeze(1)
            rows = [have, missing.nonzero().squeeze(1)]
            outputs = [
                self._encode(
                    inputs[have],
                    mask[have],
                    transitions[have],
                    return_nodes,
                    None if reduce_types is None else reduce_types[have],
                    policy,
                    None if parser_tokens is None else parser_tokens[have],
                ),
                self._encode(
                    inputs[missing],
                    mask[missing],
                    None,
                    return_nodes,
                    None,
                    self.policy(False),
                    None if parser_tokens is None else parser_tokens[missing],
                ),
            ]
            output = merge_rows(outputs, rows, inputs.size(0))
        else:
            output = self._encode(
                inputs, mask, transitions, return_nodes, reduce_types, policy, parser_tokens
            )
        if self.training and transitions is None and policy.follows_given:
            self._report_default_trees()
        if self.training and output.transition_logits is not None:
            # On the soft stack, or sampling, the task's loss trains the parser: gold
            # transitions optional.
            self._check_parser_is_trained(
                has_gold=transitions is not None or policy.learns_from_task
            )
            if self.strength_entropy_weight and output.reduce_strengths is not None:
                penalty = self.strength_entropy_weight * strength_entropy(output)
                output.sentence = attach_loss(output.sentence, penalty)
        return output

    def _encode(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor],
        return_nodes: bool,
        reduce_types: Optional[torch.Tensor],
        policy: TransitionPolicy,
        parser_tokens: Optional[torch.Tensor] = None,
    ) -> SpinnOutput:
        # Only a policy that reads given transitions gets them: the soft stack follows its own
        # parser (given transitions only train and score it).
        followed = transitions if policy.follows_given or policy.needs_given else None
        with self._autocast(inputs.device):
            if self.parser is not None:
                output = self._parse_then_compose(
                    inputs, mask, followed, return_nodes, policy, parser_tokens
                )
            else:
                output = self.spinn(
                    inputs,
                    mask,
                    followed,
                    return_nodes=return_nodes,
                    reduce_types=reduce_types if self.num_reduce_types else None,
                    policy=policy,
                )
        if self.mixed_precision is not None:
            output = _float32_outputs(output)
        return output

    def _parse_then_compose(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor],
        return_nodes: bool,
        policy: TransitionPolicy,
        parser_tokens: Optional[torch.Tensor],
    ) -> SpinnOutput:
        """With a parser of its own: the parser runs `policy` on its own inputs, then the
        composition follows the transitions it took as given trees. The output is the
        composition's, with the parser's scores of its moves."""
        assert self.parser is not None
        words = parser_tokens if self.parser.reads_token_ids else inputs.detach()
        parsed = self.parser(words, mask, transitions, policy)
        if policy.mixes:
            return self._compose_beam(inputs, mask, parsed, return_nodes)
        if policy.rescores_only:
            # PPO's further updates read the parser's scores of moves already taken, not the
            # sentence vectors: the composition is not run.
            composed = SpinnOutput(
                inputs.new_zeros(inputs.size(0), self.get_output_dim()), parsed.transitions
            )
        else:
            composed = self.spinn(
                inputs, mask, parsed.transitions, return_nodes=return_nodes, policy=Given()
            )
        return dataclasses.replace(
            composed,
            mode=parsed.mode,
            transition_logits=parsed.transition_logits,
            action_log_probs=parsed.action_log_probs,
            action_entropy=parsed.action_entropy,
            beam_log_probs=parsed.beam_log_probs,
        )

    def _compose_beam(
        self, inputs: torch.Tensor, mask: torch.Tensor, parsed: SpinnOutput, return_nodes: bool
    ) -> SpinnOutput:
        """A beam mixture with a parser of its own: the composition follows each of the beam's
        K trees of every sentence, and the sentence vector is their roots weighted by the
        softmax of the parser's scores of them (``core/runners/beam.py``), so the task's
        gradient reaches the parser through the scores alone."""
        if return_nodes:
            raise ValueError(
                "beam_mixture's sentence vector mixes several trees: node states are not "
                "returned with it (use greedy or beam_search for them)"
            )
        assert parsed.beam_scores is not None and parsed.beam_transitions is not None
        batch_size, width = parsed.beam_scores.shape
        roots = self.spinn(
            inputs.repeat_interleave(width, dim=0),
            mask.repeat_interleave(width, dim=0),
            parsed.beam_transitions.flatten(0, 1),
            policy=Given(),
        ).sentence.view(batch_size, width, -1)
        weights = torch.softmax(parsed.beam_scores, dim=1).to(roots.dtype)
        return dataclasses.replace(
            parsed,
            sentence=(weights.unsqueeze(2) * roots).sum(dim=1),
            beam_roots=roots if parsed.beam_roots is not None else None,
        )

    def _autocast(self, device: torch.device):
        dtype = MIXED_PRECISION[self.mixed_precision]
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device.type, dtype=dtype)

    def forward(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        transitions: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        transitions = given_trees(transitions)
        output = self.encode(inputs, mask, transitions)
        if (
            self.training
            and self.transition_loss_weight
            and transitions is not None
            and output.transition_logits is not None
        ):
            gold = gold_like(transitions, output)
            loss = self.transition_loss_weight * transition_loss(output, gold)
            return attach_loss(output.sentence, loss)
        return output.sentence

    def _parser_classifier(self) -> Optional[torch.nn.Linear]:
        """The layer that scores SHIFT and REDUCE, whichever network holds it."""
        tracker = self.parser.spinn.tracker if self.parser is not None else self.spinn.tracker
        return tracker.transition_classifier if tracker is not None else None

    def _report_default_trees(self) -> None:
        """Says once that the encoder composes over balanced trees, and how to give it real
        ones."""
        if self._reported_default_trees:
            return
        self._reported_default_trees = True
        logger.warning(
            "SpinnEncoder: no transitions reach the encoder, so it composes each sentence's "
            "balanced binary tree (what it does in any model, e.g. basic_classifier). For real "
            "trees the model must pass transitions: for labelled sentences, the "
            "text_classification_transitions reader (a binary_parse per line, or a "
            "tree_source such as benepar) with the spinn_classifier model; see "
            "docs/your_own_model.md."
        )

    def _check_parser_is_trained(self, has_gold: bool) -> None:
        """Warns (once each) when the parser is trained without gold transitions, and when no
        gradient has reached it after `UNTRAINED_PARSER_BATCHES` training batches: then it
        picks trees with an untrained argmax. A frozen parser (its classifier's
        ``requires_grad`` off, e.g. one trained elsewhere) is left alone: no gradient can
        reach it, and none is meant to."""
        classifier = self._parser_classifier()
        assert classifier is not None  # called only with a parser
        if not classifier.weight.requires_grad:
            return
        self._training_passes += 1
        if self._training_passes == 1:
            self._parser_probe.watch(classifier.weight)
        if self._parser_probe.reached or self._training_passes > UNTRAINED_PARSER_BATCHES:
            self._parser_probe.release()  # the answer is known: no hook left on the weights
        if not has_gold and self._training_passes == 1:
            logger.warning(
                "SpinnEncoder: predict_transitions is on but no gold transitions reach the "
                "encoder in training: the parser follows its own argmax, which no loss can "
                "train. Fine for a parser trained elsewhere; otherwise pass gold transitions "
                "(a reader with transitions fields) and train it (transition_loss_weight, or "
                "core.supervision.transition_loss in your model)."
            )
        if self._training_passes == UNTRAINED_PARSER_BATCHES and not self._parser_probe.reached:
            logger.warning(
                "SpinnEncoder: no gradient has reached the parser (transition classifier) in "
                "%d training batches: nothing trains it, and it will pick trees with an "
                "untrained argmax. Set transition_loss_weight above 0: the model's "
                "(spinn_nli, spinn_classifier: the paper's alpha, e.g. 3.9), or the encoder's "
                "in a model that passes it gold transitions but knows nothing of parsers; or "
                "add core.supervision.transition_loss in your own model; or let the task "
                "train it (soft_stack, or the model's policy_gradient).",
                UNTRAINED_PARSER_BATCHES,
            )


def _parser_network(
    settings: OwnParser, input_dim: int, vocab: Optional[Vocabulary]
) -> ParserNetwork:
    """The `parser` block's network: its own embeddings over the vocabulary's namespace (with
    `embedding_dim`), else reading the encoder's `input_dim` word vectors."""
    num_embeddings = 0
    if settings.embedding_dim:
        if vocab is None:
            raise ValueError(
                "a parser with embeddings of its own (parser.embedding_dim > 0) needs the "
                "vocabulary: AllenNLP passes it to a model's encoder; in Python pass "
                "SpinnEncoder(..., vocab=vocab)"
            )
        num_embeddings = vocab.get_vocab_size(settings.vocab_namespace)
    return ParserNetwork(
        input_dim=settings.embedding_dim or input_dim,
        hidden_dim=settings.hidden_dim,
        tracking_dim=settings.tracking_dim,
        num_embeddings=num_embeddings,
        leaf_lstm=settings.leaf_lstm,
    )


def _check_evaluation_settings(
    parse_at_test_time: Optional[bool],
    soft_at_test_time: Optional[bool],
    has_parser: bool,
    soft_stack: bool,
    gumbel_straight_through: bool,
) -> None:
    """The evaluation-time switches are read only by the encoders they apply to: set on any
    other, each is an error naming it (it would be silently ignored)."""
    if parse_at_test_time is not None and not has_parser:
        raise ValueError(
            "parse_at_test_time is read only by an encoder with a parser "
            "(predict_transitions: true or a parser block): leave it out"
        )
    if soft_at_test_time is not None:
        if not soft_stack:
            raise ValueError(
                "soft_at_test_time is read only with soft_stack: true: leave it out, or set "
                "soft_stack"
            )
        if gumbel_straight_through and soft_at_test_time:
            raise ValueError(
                "soft_at_test_time: true is not followed with gumbel_straight_through, which "
                "evaluates on the discrete stack with the parser's greedy moves: leave it out"
            )


def _configured_policy(
    setting: str,
    config: Optional[Dict[str, Any]],
    has_parser: bool,
    overridden: Dict[str, bool],
) -> Optional[TransitionPolicy]:
    """The policy a config names for `setting`, checked against the encoder: one that reads
    the parser's logits needs a parser, and the settings it would override must be left out."""
    if config is None:
        return None
    policy = policy_from_config(config, setting)
    if policy.needs_parser and not has_parser:
        raise ValueError(
            f"{setting} {config['type']!r} reads the parser's logits, and this encoder has no "
            f"parser: give it one (predict_transitions: true with a tracking_dim, or a parser "
            f"block), or, for a policy of your own that does not read step.logits, set "
            f"needs_parser = False on its class"
        )
    for other, is_set in overridden.items():
        if is_set:
            raise ValueError(
                f"{setting} replaces what {other} would choose, so {other} would not be read: "
                f"leave one of them out"
            )
    return policy
