import contextlib
import dataclasses
import logging
from typing import Any, Dict, List, Optional, Union

import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.modules.added_losses import AddedLosses
from spinn_allennlp.modules.encoder_settings import (
    DEFAULT_TYPE_DIM,
    ProjectionSettings,
    SpeedSettings,
    TrackerSettings,
    translate_legacy_keys,
)
from spinn_allennlp.modules.input_checks import word_mask
from spinn_allennlp.modules.own_parser import OwnParser, parse_then_compose, parser_network
from spinn_allennlp.modules.tree_encoder import (
    TreeEncoder,
    given_trees,
    gold_like,
    rows_without_trees,
    with_default_trees,
)
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules
from spinn_core.batch import check_transitions_tensor
from spinn_core.gradient_hooks import GradientProbe
from spinn_core.graphs import GraphedSpinn
from spinn_core.output import SpinnOutput, merge_rows
from spinn_core.policies import Given, Greedy, TransitionPolicy
from spinn_core.policy_registry import policy_from_config
from spinn_core.rules import check_parser_tokens
from spinn_core.spinn import Spinn
from spinn_core.supervision import strength_entropy, transition_loss

logger = logging.getLogger(__name__)

# Training batches after which a parser that has received no gradient is reported.
UNTRAINED_PARSER_BATCHES = 20


# The encoder's `speed.mixed_precision` values and the autocast dtype of each.
MIXED_PRECISION: Dict[Optional[str], Optional[torch.dtype]] = {None: None, "bf16": torch.bfloat16}

# A policy as a config gives it (`{"type": name, ...}`) or, from Python, the policy itself.
PolicySetting = Union[Dict[str, Any], TransitionPolicy]


# Said once when training composes balanced trees because no transitions reach the encoder.
DEFAULT_TREES_WARNING = (
    "SpinnEncoder: no transitions reach the encoder, so it composes each sentence's balanced "
    "binary tree (what it does in any model, e.g. basic_classifier). For real trees the model "
    "must pass transitions: for labelled sentences, the text_classification_transitions reader "
    "(a binary_parse per line, or a tree_source such as benepar) with the spinn_classifier "
    "model; see docs/your_own_model.md."
)


def _rows(tensor: Optional[torch.Tensor], rows: torch.Tensor) -> Optional[torch.Tensor]:
    return None if tensor is None else tensor[rows]


def _core(
    input_dim: int,
    hidden_dim: int,
    tracker: Optional[TrackerSettings],
    composition: Union[str, Dict[str, Any]],
    projection: ProjectionSettings,
    speed: SpeedSettings,
) -> Spinn:
    """The core model the blocks describe (`spinn_core.spinn.Spinn`)."""
    return Spinn(
        input_dim=input_dim,
        hidden_dim=hidden_dim,
        tracking_dim=tracker.tracking_dim if tracker else 0,
        predict_transitions=bool(tracker and tracker.predict_transitions),
        composition=composition,
        projection_dropout=projection.dropout,
        projection_batch_norm=projection.batch_norm,
        levelwise=speed.levelwise is not False,
        num_reduce_types=tracker.reduce_types if tracker else 0,
        type_dim=(tracker.type_dim if tracker else None) or DEFAULT_TYPE_DIM,
        summary_dim=tracker.summary_dim if tracker else 0,
        composition_reads_tracker=tracker.composition_reads_tracker if tracker else True,
        parser_trains_nodes=tracker.parser_trains_nodes if tracker else True,
    )


def _graphed(spinn: Spinn, speed: SpeedSettings) -> Optional[GraphedSpinn]:
    """``spinn``'s passes replayed from CUDA graphs, with ``speed.cuda_graphs``."""
    if not speed.cuda_graphs:
        return None
    return GraphedSpinn(spinn, batch_size=speed.graph_batch_size)


def _autocast(mixed_precision: Optional[str], device: torch.device, graphs: bool = False):
    """The pass's autocast context. With CUDA graphs, autocast's weight cache off: a graph
    cannot be captured with it on (PyTorch's CUDA-graph notes), and a cast kept from one pass
    to the next is what a replay already saves."""
    dtype = MIXED_PRECISION[mixed_precision]
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype, cache_enabled=not graphs)


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
    """SPINN (Bowman et al. 2016): shift-reduce TreeLSTM composition over binary trees, with a
    thin stack batched over sentences. Registered as the `Seq2VecEncoder` "spinn".

    A variant is its parts (no `tracker`: SPINN-PI-NT, exactly a TreeLSTM; a `tracker`:
    SPINN-PI; with `predict_transitions` or a `parser` block: SPINN), and how trees are made is
    the `training_policy` / `evaluation_policy` pair alone (docs/configuration.md: every paper
    variant). Without transitions a parser-less encoder composes the balanced binary tree (so it
    works in `basic_classifier`); one with a parser follows its own greedy parse. Input:
    (batch_size, num_tokens, input_dim), real tokens first in the mask; output: (batch_size,
    hidden_dim); `encode` returns the whole `SpinnOutput`. The old flat keys of 0.1 and 0.2
    configs are translated, with a warning naming the new form (`translate_legacy_keys`).

    # Parameters (docs/configuration.md: each with its fields and the paper's names)

    input_dim : `int`
        Size of the word vectors.
    hidden_dim : `int`
        D, the size of a tree node's h (and c): the output size.
    tracker : `TrackerSettings`, optional (default = `None`: no tracking LSTM)
        The tracking LSTM and the parser on its state (`encoder_settings.TrackerSettings`).
    parser : `OwnParser`, optional (default = `None`)
        A parser with a network of its own (`own_parser.py`); the encoder's layers are then
        the task's composition alone, following its trees.
    composition : `str` or `Dict[str, Any]`, optional (default = `"treelstm"`)
        A registered composition (`spinn_core.compositions`: `"treelstm"`, eq. 1-3, and the
        others `registered_compositions()` lists), by name or as `{"type": name, ...its
        arguments}`.
    projection : `ProjectionSettings`, optional (default = no dropout, no batch norm)
        The leaves' projection (eq. 4).
    training_policy : `Dict[str, Any]`, optional (default = `{"type": "given"}`)
        How trees are made in training, `{"type": NAME, ...its arguments}`: a policy of
        `spinn_core.policies` ("given", "greedy", "mixed", "sampled", "soft",
        "straight_through_gumbel", "beam_search", "beam_mixture") or one registered with
        `spinn_core.policy_registry.register_policy`.
    evaluation_policy : `Dict[str, Any]`, optional (default = greedy with a parser, else given)
        The same at evaluation and prediction (e.g. `{"type": "beam_search", "width": 4}`).
    transition_loss_weight : `float`, optional (default = `0.0`)
        With a parser and gold transitions at `forward` in training: this weight times the
        transition loss joins the sentence vectors' loss (metric `encoder_transition_loss`).
        Leave 0 when the model adds it itself (`spinn_nli`).
    strength_entropy_weight : `float`, optional (default = `0.0`)
        With a `"soft"` training policy: this weight times the strengths' mean binary entropy
        joins the loss, for clear moves (metric `encoder_strength_entropy`).
    speed : `SpeedSettings`, optional (default = eager, float32)
        How fast, not what (docs/speed.md).
    vocab : `Vocabulary`, optional (default = `None`)
        Given by AllenNLP; read only by a `parser` with embeddings of its own.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        tracker: Optional[TrackerSettings] = None,
        parser: Optional[OwnParser] = None,
        composition: Union[str, Dict[str, Any]] = "treelstm",
        projection: ProjectionSettings = ProjectionSettings(),
        training_policy: Optional[Dict[str, Any]] = None,
        evaluation_policy: Optional[Dict[str, Any]] = None,
        transition_loss_weight: float = 0.0,
        strength_entropy_weight: float = 0.0,
        speed: SpeedSettings = SpeedSettings(),
        vocab: Optional[Vocabulary] = None,
    ) -> None:
        super().__init__()
        has_parser = parser is not None or (tracker is not None and tracker.predict_transitions)
        self.training_policy = _policy("training_policy", training_policy, Given())
        self.evaluation_policy = _policy(
            "evaluation_policy", evaluation_policy, Greedy() if has_parser else Given()
        )
        with configuration_errors():
            rules.check_encoder_settings(
                input_dim,
                hidden_dim,
                tracker,
                parser,
                composition,
                projection,
                self.training_policy,
                self.evaluation_policy,
                transition_loss_weight,
                strength_entropy_weight,
                speed,
            )
        self.parser = parser_network(parser, input_dim, vocab) if parser is not None else None
        self.spinn = _core(input_dim, hidden_dim, tracker, composition, projection, speed)
        self.transition_loss_weight = transition_loss_weight
        self.strength_entropy_weight = strength_entropy_weight
        self.mixed_precision = speed.mixed_precision
        # Passes on CUDA replayed from graphs (a wrapper of the core, not a module of ours), and
        # those of a parser block's own SPINN, whose 2N - 1 steps are sequential too.
        self.cuda_graphs = _graphed(self.spinn, speed)
        self.parser_graphs = _graphed(self.parser.spinn, speed) if self.parser else None
        self._parser_check = ParserTrainingCheck()
        # What this encoder adds to the loss: the models' metrics `encoder_*`.
        self.added_losses = AddedLosses()
        self._reported_default_trees = False

    @classmethod
    def from_params(
        cls, params: Params, constructor_to_call=None, constructor_to_inspect=None, **extras
    ) -> "SpinnEncoder":
        """After the old flat keys are translated (every 0.1 and 0.2 config and archive)."""
        translated = Params(translate_legacy_keys(params.as_dict(quiet=True)), params.history)
        return super().from_params(
            translated,
            constructor_to_call=constructor_to_call,
            constructor_to_inspect=constructor_to_inspect,
            **extras,
        )

    @property
    def has_parser(self) -> bool:
        return self.parser is not None or self.spinn.has_parser

    @property
    def parser_learns_from_task(self) -> bool:
        """Whether the task's loss reaches the parser through the encoder itself (the soft
        stack, straight-through Gumbel, a training policy such as `beam_mixture`), with no
        loss of the model's for it."""
        return self.has_parser and self.training_policy.learns_from_task

    @property
    def parser_reads_token_ids(self) -> bool:
        """Whether the parser embeds token ids of its own (a `parser` block with
        `embedding_dim`): `encode` then needs `parser_tokens`."""
        return self.parser is not None and self.parser.reads_token_ids

    def parser_parameters(self) -> List[torch.nn.Parameter]:
        """The `parser` network's parameters, else `Spinn.parser_parameters()`: what PPO's
        further updates move and `parser_warmup` freezes."""
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
        """The transition policy `encode` follows: `training_policy` in training,
        `evaluation_policy` otherwise; where no transitions are given and the policy would
        follow them, an encoder with a parser follows its own greedy parse (one without
        composes the balanced binary tree)."""
        chosen = self.training_policy if self.training else self.evaluation_policy
        if chosen.traits.reads_given and not has_transitions and self.has_parser:
            return Greedy()
        return chosen

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
        `policy` overrides the encoder's own choice of transitions (`spinn_core/policies.py`),
        e.g. `Sampled()` while a latent parser trains by REINFORCE. Training the parser is the
        caller's job here (see `transition_loss_weight`). `parser_tokens`: (batch_size,
        num_tokens) token ids, for a `parser` with embeddings of its own."""
        mask = word_mask(self, inputs, mask)
        check_parser_tokens(self.parser_reads_token_ids, parser_tokens is not None)
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
        if transitions is not None and policy.traits.reads_given:
            missing = rows_without_trees(transitions, mask)
        if transitions is None or missing is None or not bool(missing.any()):
            output = self._encode(
                inputs, mask, transitions, return_nodes, reduce_types, policy, parser_tokens
            )
        else:
            # A parser that follows given trees: the sentences without one follow its own
            # parse, in a pass of their own.
            have, lack = (~missing).nonzero().squeeze(1), missing.nonzero().squeeze(1)
            own = self.policy(False)
            passes = [(have, transitions, reduce_types, policy), (lack, None, None, own)]
            outputs = [
                self._encode(
                    inputs[rows],
                    mask[rows],
                    _rows(given, rows),
                    return_nodes,
                    _rows(types, rows),
                    chosen,
                    _rows(parser_tokens, rows),
                )
                for rows, given, types, chosen in passes
            ]
            output = merge_rows(outputs, [have, lack], inputs.size(0))
        if self.training and transitions is None and policy.follows_given:
            if not self._reported_default_trees:
                self._reported_default_trees = True
                logger.warning(DEFAULT_TREES_WARNING)
        if self.training and output.transition_logits is not None:
            # On the soft stack, or sampling, the task's loss trains the parser: gold
            # transitions optional.
            self._parser_check.after_pass(
                _parser_classifier(self),
                has_gold=transitions is not None or policy.learns_from_task,
            )
            if self.strength_entropy_weight and output.reduce_strengths is not None:
                penalty = self.strength_entropy_weight * strength_entropy(output)
                output.sentence = self.added_losses.attach(
                    "strength_entropy", output.sentence, penalty
                )
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
        followed = transitions if policy.traits.reads_given else None
        core = self.cuda_graphs if self.cuda_graphs is not None else self.spinn
        with _autocast(self.mixed_precision, inputs.device, graphs=self.cuda_graphs is not None):
            if self.parser is not None:
                parser = (self.parser, self.parser_graphs)
                output = parse_then_compose(
                    parser, core, inputs, mask, followed, return_nodes, policy, parser_tokens
                )
            else:
                output = core(
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
            return self.added_losses.attach("transition_loss", output.sentence, loss)
        return output.sentence


class ParserTrainingCheck:
    """Warns (once each) when a parser is trained without gold transitions, and when no
    gradient has reached it after `UNTRAINED_PARSER_BATCHES` training batches: then it picks
    trees with an untrained argmax. A frozen parser (its classifier's ``requires_grad`` off,
    e.g. one trained elsewhere) is left alone: no gradient can reach it, and none is meant
    to."""

    def __init__(self) -> None:
        # Set by a gradient reaching the classifier's weights.
        self._probe = GradientProbe()
        self._training_passes = 0

    def after_pass(self, classifier: Optional[torch.nn.Linear], has_gold: bool) -> None:
        """Called after each training pass of an encoder with a parser; ``classifier`` is the
        layer that scores SHIFT and REDUCE."""
        assert classifier is not None  # called only with a parser
        if not classifier.weight.requires_grad:
            return
        self._training_passes += 1
        if self._training_passes == 1:
            self._probe.watch(classifier.weight)
        if self._probe.reached or self._training_passes > UNTRAINED_PARSER_BATCHES:
            self._probe.release()  # the answer is known: no hook left on the weights
        if not has_gold and self._training_passes == 1:
            logger.warning(
                "SpinnEncoder: the encoder has a parser but no gold transitions reach it in "
                "training: the parser follows its own argmax, which no loss can train. Fine "
                "for a parser trained elsewhere; otherwise pass gold transitions (a reader "
                "with transitions fields) and train it (transition_loss_weight, or "
                "spinn_core.supervision.transition_loss in your model)."
            )
        if self._training_passes == UNTRAINED_PARSER_BATCHES and not self._probe.reached:
            logger.warning(
                "SpinnEncoder: no gradient has reached the parser (transition classifier) in "
                "%d training batches: nothing trains it, and it will pick trees with an "
                "untrained argmax. Set transition_loss_weight above 0: the model's "
                "(spinn_nli, spinn_classifier: the paper's alpha, e.g. 3.9), or the encoder's "
                "in a model that passes it gold transitions but knows nothing of parsers; or "
                "add spinn_core.supervision.transition_loss in your own model; or let the task "
                "train it (a soft training_policy, or the model's policy_gradient).",
                UNTRAINED_PARSER_BATCHES,
            )


def _parser_classifier(encoder: SpinnEncoder) -> Optional[torch.nn.Linear]:
    """The layer that scores SHIFT and REDUCE, whichever network holds it."""
    spinn = encoder.parser.spinn if encoder.parser is not None else encoder.spinn
    tracker = spinn.tracker
    return tracker.transition_classifier if tracker is not None else None


def _policy(
    setting: str, config: Optional[PolicySetting], default: TransitionPolicy
) -> TransitionPolicy:
    """The policy a config (or a Python caller) gives for `setting`, or `default`."""
    if config is None:
        return default
    if isinstance(config, TransitionPolicy):
        return config
    return policy_from_config(config, setting)
