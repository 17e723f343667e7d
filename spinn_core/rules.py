"""The rule book: every rule that rejects a combination of settings, written once.

A rule reads two or more settings (or a setting and what a call passes) and raises
:class:`SettingsError` naming the one to change. The rules are grouped by what they guard:

* the core's arguments (:func:`check_options`, when a :class:`~spinn_core.spinn.Spinn` is
  built) and a policy with the parts and tensors of a pass (:func:`check_policy`, before each
  pass); the ``spinn`` encoder's config runs the same two (:func:`check_encoder_settings`),
  its messages naming its own keys (:data:`ENCODER_NAMES`) instead of the core's arguments;
* the encoder's blocks beyond the core (speed, the tracker block, a parser block, its loss
  weights) and its old flat keys (:func:`check_legacy_tracker`, :func:`check_legacy_policy_keys`);
* a policy's own arguments that go together (:func:`check_beam_mixture`) and what a pass may
  ask of it (:func:`check_beam_mixture_nodes`);
* a model with its encoder (:func:`check_parser_training`, :func:`check_beam_mix`), the policy
  gradient's settings (:func:`check_policy_gradient`) and the training callbacks that act on
  the parser (:func:`check_parser_updates`, :func:`check_encoder_schedule`).

The rules read plain values (numbers, names, flags, the policies' declared traits), never
AllenNLP: the core raises :class:`SettingsError`, a ``ValueError``; the plugin raises it as
AllenNLP's ``ConfigurationError`` (``spinn_allennlp.settings_errors.configuration_errors``).
A function elsewhere may still check its own argument alone (a width of at least 1, a name
from a list) or the data and tensors it is handed; ``tests/core/test_rule_book.py`` lists
what raises where and holds every other rule to this module.
"""

import logging
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from spinn_core.compositions import composition_choice
from spinn_core.output import Mode

logger = logging.getLogger(__name__)


class SettingsError(ValueError):
    """Settings that cannot work together, or one that would not be read."""


class Names(Dict[str, str]):
    """How a caller spells each setting in its messages: the core's keyword arguments (a name
    left out is spelled as itself) or the ``spinn`` encoder's config keys."""

    def __missing__(self, key: str) -> str:
        return key


CORE_NAMES = Names({"a_parser": "predict_transitions=true with a tracking_dim"})
ENCODER_NAMES = Names(
    {
        "a_parser": "tracker.predict_transitions: true",
        "tracking_dim": "tracker.tracking_dim",
        "predict_transitions": "tracker.predict_transitions",
        "reduce_types": "tracker.reduce_types",
        "summary_dim": "tracker.summary_dim",
        "parser_trains_nodes": "tracker.parser_trains_nodes",
        "composition_reads_tracker": "tracker.composition_reads_tracker",
        "projection_dropout": "projection.dropout",
        "projection_batch_norm": "projection.batch_norm",
    }
)

# (broken, message): a rule as a list of rules states it; the first broken one is raised.
Rule = Tuple[bool, str]


def _raise_first(rules: Iterable[Rule]) -> None:
    for broken, message in rules:
        if broken:
            raise SettingsError(message)


# ----------------------------------------------------------------------------------------------
# The core: its arguments, and a policy with the parts and tensors of a pass.
# ----------------------------------------------------------------------------------------------

LEAVES = ("projection", "cell")


def check_options(
    input_dim: int,
    hidden_dim: int,
    tracking_dim: int = 0,
    predict_transitions: bool = False,
    composition: Any = "treelstm",
    projection_dropout: float = 0.0,
    projection_batch_norm: bool = False,
    node_input_dim: int = 0,
    leaf: str = "projection",
    reduce_types: int = 0,
    summary_dim: int = 0,
    parser_trains_nodes: bool = True,
    names: Names = CORE_NAMES,
) -> None:
    """The arguments of the core's :class:`~spinn_core.spinn.Spinn` that cannot work
    together; ``names``: how the caller spells them (the encoder's config keys)."""
    n = names
    if input_dim < 1 or hidden_dim < 1:
        raise SettingsError(
            f"input_dim and hidden_dim must be positive, got {input_dim}, {hidden_dim}"
        )
    sizes = {
        "tracking_dim": tracking_dim,
        "summary_dim": summary_dim,
        "node_input_dim": node_input_dim,
        "reduce_types": reduce_types,
    }
    negative = {n[key]: size for key, size in sizes.items() if size < 0}
    if negative:
        raise SettingsError(
            f"{' and '.join(negative)} must be >= 0, got {', '.join(map(str, negative.values()))}"
        )
    try:
        composition_choice(composition)  # a registered name, its arguments accepted
    except ValueError as error:
        raise SettingsError(str(error)) from None
    if leaf not in LEAVES:
        raise SettingsError(f"leaf must be 'projection' or 'cell', got {leaf!r}")
    needs_tracker = {
        f"{n['predict_transitions']}=true (a parser)": predict_transitions,
        f"{n['reduce_types']} > 0 (typed REDUCE)": reduce_types > 0,
        f"{n['summary_dim']} > 0 (stack and buffer summaries)": summary_dim > 0,
        f"{n['parser_trains_nodes']}=False (it detaches the tracker's inputs)": (
            not parser_trains_nodes
        ),
    }
    for what, asked in needs_tracker.items():
        if asked and tracking_dim <= 0:
            raise SettingsError(f"{what} needs a tracking LSTM: set {n['tracking_dim']} > 0")
    if not 0.0 <= projection_dropout < 1.0:
        raise SettingsError(
            f"{n['projection_dropout']} is a drop rate in [0, 1), got {projection_dropout} "
            "(the paper's tables give keep rates: drop = 1 - keep)"
        )
    if leaf == "cell":
        _raise_first(
            [
                (
                    node_input_dim != input_dim,
                    "leaf='cell' feeds the word vectors through the node input: "
                    f"node_input_dim ({node_input_dim}) must equal input_dim ({input_dim})",
                ),
                (
                    tracking_dim > 0,
                    "leaf='cell' is for models without tracking: set tracking_dim = 0",
                ),
                (
                    bool(projection_dropout or projection_batch_norm),
                    "projection_dropout and projection_batch_norm need leaf='projection'",
                ),
            ]
        )


def check_policy(
    policy: Any,
    has_parser: bool,
    has_type_classifier: bool,
    num_reduce_types: int,
    node_input_dim: int,
    has_summaries: bool,
    transitions_given: bool,
    reduce_types_given: bool,
    node_inputs_given: bool,
) -> None:
    """A model with these parts cannot run ``policy`` (a ``TransitionPolicy``) on the tensors
    passed (whether transitions, REDUCE types and node inputs were given). Runs before every
    pass: plain tests, each message made only when its rule is broken."""
    check_policy_fits(policy, None, has_parser, has_summaries)
    if policy.needs_given and not transitions_given:
        raise SettingsError(f"mode {str(policy.mode)!r} needs given transitions to mix with")
    if node_inputs_given != (node_input_dim > 0):
        raise SettingsError(
            "node_inputs must be given exactly when node_input_dim > 0 "
            f"(node_input_dim = {node_input_dim})"
        )
    if policy.soft and node_input_dim > 0:
        raise SettingsError("node inputs are not implemented on the soft stack")
    if (
        num_reduce_types > 0
        and not has_type_classifier
        and not (reduce_types_given and policy.follows_given)
    ):
        raise SettingsError(
            "typed REDUCE without a type classifier (predict_transitions=false) follows "
            "given reduce_types only"
        )


def check_policy_fits(
    policy: Any,
    setting: Optional[str],
    has_parser: bool,
    has_summaries: bool,
    names: Names = CORE_NAMES,
) -> None:
    """The parts a policy needs whatever the pass: a parser for one that reads its logits, no
    stack summaries on the soft stack. ``setting``: the config key that chose the policy, for
    the messages (None: a pass of the core's, which names the policy and its mode)."""
    parser_missing = policy.needs_parser and not has_parser
    if not parser_missing and not (policy.soft and has_summaries):
        return
    kind = type(policy).__name__
    who = f"{kind} (mode {str(policy.mode)!r})" if setting is None else f"{setting} {kind}"
    if parser_missing:
        raise SettingsError(
            f"{who} reads the parser's logits, so it needs a parser, and this model has "
            f"none: give it one ({names['a_parser']}, or a parser block), or, for a policy "
            "of your own that does not read step.logits, declare it (traits = "
            "PolicyTraits(..., needs_parser=False), or set needs_parser = False on its class)"
        )
    raise SettingsError(
        f"stack and buffer summaries ({names['summary_dim']}) are not implemented on "
        f"the soft stack, which {who} drives: set {names['summary_dim']} to 0"
    )


# ----------------------------------------------------------------------------------------------
# The `spinn` encoder's config: the core's rules on its keys, and its own blocks.
# ----------------------------------------------------------------------------------------------

# The `mixed_precision` values.
MIXED_PRECISION_VALUES = ("bf16",)


def check_encoder_settings(
    input_dim: int,
    hidden_dim: int,
    tracker: Optional[Any],
    parser: Optional[Any],
    composition: Any,
    projection: Any,
    training_policy: Any,
    evaluation_policy: Any,
    transition_loss_weight: float,
    strength_entropy_weight: float,
    speed: Any,
) -> None:
    """The ``spinn`` encoder's blocks (``spinn_allennlp.modules.encoder_settings``: the
    tracker, parser, projection and speed blocks) and policies: its own rules, then the core's
    (:func:`check_options`, :func:`check_policy_fits`) on the options its blocks make, each
    message naming the config key."""
    predicts = tracker is not None and tracker.predict_transitions
    has_own_parser = parser is not None
    policies = {"training_policy": training_policy, "evaluation_policy": evaluation_policy}
    soft = [name for name, policy in policies.items() if policy.soft]
    _raise_first(_speed_rules(speed, tracker))
    _raise_first(_tracker_rules(tracker, has_own_parser, soft))
    _raise_first(_parser_block_rules(parser))
    check_options(
        input_dim,
        hidden_dim,
        tracking_dim=tracker.tracking_dim if tracker else 0,
        predict_transitions=bool(predicts),
        composition=composition,
        projection_dropout=projection.dropout,
        projection_batch_norm=projection.batch_norm,
        reduce_types=tracker.reduce_types if tracker else 0,
        summary_dim=tracker.summary_dim if tracker else 0,
        parser_trains_nodes=tracker.parser_trains_nodes if tracker else True,
        names=ENCODER_NAMES,
    )
    has_parser = predicts or has_own_parser
    has_summaries = tracker is not None and tracker.summary_dim > 0
    for name, policy in policies.items():
        check_policy_fits(policy, name, has_parser, has_summaries, ENCODER_NAMES)
    _raise_first(
        [
            (
                transition_loss_weight != 0 and not has_parser,
                "transition_loss_weight trains a parser: it needs tracker.predict_transitions: "
                "true or a parser block",
            ),
            (
                strength_entropy_weight != 0 and not _soft_strengths(training_policy),
                "strength_entropy_weight sharpens the soft stack's strengths in training: it "
                'needs training_policy {"type": "soft"} (straight-through Gumbel\'s are already '
                "0 or 1)",
            ),
        ]
    )


def _soft_strengths(policy: Any) -> bool:
    """Whether ``policy`` drives the soft stack with strengths between 0 and 1."""
    return policy.soft and policy.mode != Mode.STRAIGHT_THROUGH


def _speed_rules(speed: Any, tracker: Optional[Any]) -> List[Rule]:
    """The `speed` block: how fast, not what."""
    return [
        (
            speed.mixed_precision is not None
            and speed.mixed_precision not in MIXED_PRECISION_VALUES,
            f"speed.mixed_precision must be one of {list(MIXED_PRECISION_VALUES)} or null, "
            f"got {speed.mixed_precision!r}",
        ),
        (
            speed.graph_batch_size is not None and not speed.cuda_graphs,
            "speed.graph_batch_size is read only with speed.cuda_graphs: true: leave it out",
        ),
        (
            speed.graph_batch_size is not None and speed.graph_batch_size < 1,
            f"speed.graph_batch_size must be positive, got {speed.graph_batch_size}",
        ),
        (
            speed.levelwise is True and speed.cuda_graphs,
            "speed.levelwise: true with speed.cuda_graphs: true cannot be replayed (the "
            "level-wise runner reads tree heights back to the host): leave levelwise out, and "
            "the graphs replay the step loop (passes that run eagerly stay level-wise)",
        ),
        (
            speed.levelwise is not None and tracker is not None,
            "speed.levelwise is read only without a tracker (SPINN-PI-NT composes level by "
            "level; a tracker reads every step): leave it out",
        ),
    ]


def _tracker_rules(tracker: Optional[Any], has_own_parser: bool, soft: Sequence[str]) -> List[Rule]:
    """The tracker block, and a parser block beside it."""
    discrete_only = (
        has_own_parser and bool(soft),
        f"a parser block drives a discrete stack: {' and '.join(soft)} cannot be soft",
    )
    if tracker is None:
        return [discrete_only]
    return [
        (
            tracker.tracking_dim < 1,
            "tracker.tracking_dim must be positive (no tracker: leave the block out)",
        ),
        (
            tracker.type_dim is not None and not tracker.reduce_types,
            "tracker.type_dim is the size of the REDUCE type embedding: it is read only with "
            "tracker.reduce_types > 0",
        ),
        (
            tracker.type_dim is not None and tracker.type_dim < 1,
            f"tracker.type_dim must be positive, got {tracker.type_dim}",
        ),
        (
            has_own_parser and tracker.predict_transitions,
            "a parser block does not go with tracker.predict_transitions: true (the parser "
            "block is the parser): leave one out",
        ),
        (
            has_own_parser and tracker.reduce_types > 0,
            "a parser block does not go with tracker.reduce_types > 0 (it predicts no REDUCE "
            "types): leave it out",
        ),
        discrete_only,
        (
            not tracker.predict_transitions and not tracker.composition_reads_tracker,
            "tracker.composition_reads_tracker: false without tracker.predict_transitions: "
            "nothing would read the tracker (no parser scores from it, and the composition "
            "leaves it out), though it runs at every step: leave the tracker block out",
        ),
    ]


def _parser_block_rules(parser: Optional[Any]) -> List[Rule]:
    """The parser block's own settings."""
    if parser is None:
        return []
    return [
        (
            parser.vocab_namespace != "tokens" and not parser.embedding_dim,
            "parser.vocab_namespace names the vocabulary of the parser's own embeddings: it "
            "is read only with parser.embedding_dim > 0 (0: the parser reads the word vectors)",
        ),
    ]


def check_parser_vocabulary(embedding_dim: int, has_vocab: bool) -> None:
    """A parser block with embeddings of its own reads the vocabulary's size."""
    if embedding_dim and not has_vocab:
        raise SettingsError(
            "a parser with embeddings of its own (parser.embedding_dim > 0) needs the "
            "vocabulary: AllenNLP passes it to a model's encoder; in Python pass "
            "SpinnEncoder(..., vocab=vocab)"
        )


def check_parser_tokens(parser_reads_token_ids: bool, parser_tokens_given: bool) -> None:
    """A pass of an encoder whose parser embeds token ids needs them."""
    if parser_reads_token_ids and not parser_tokens_given:
        raise SettingsError(
            "this encoder's parser embeds token ids of its own (parser.embedding_dim > 0): "
            "pass parser_tokens (the models spinn_classifier and spinn_nli do), or set "
            "parser.embedding_dim to 0 to let it read the word vectors"
        )


# ----------------------------------------------------------------------------------------------
# The encoder's old flat keys (0.1.0 and 0.2.0 configs).
# ----------------------------------------------------------------------------------------------


def check_legacy_tracker(tracker: Optional[Mapping[str, Any]]) -> None:
    """Old tracker keys moved into a block with no tracking LSTM."""
    if tracker is not None and not tracker.get("tracking_dim"):
        needs = sorted(key for key in tracker if key != "tracking_dim")
        raise SettingsError(
            f"{', '.join(needs)} need a tracking LSTM: set tracker.tracking_dim > 0 "
            f"(tracking_dim in the old form)"
        )


def check_legacy_policy_keys(
    values: Mapping[str, Any], defaults: Mapping[str, Any], has_parser: bool
) -> None:
    """The old keys that chose the policies (``values``; ``defaults``: the value meaning "not
    set"), among themselves and with the parser."""
    set_keys = [key for key, default in defaults.items() if values[key] != default]
    if set_keys and not has_parser:
        raise SettingsError(
            f"{', '.join(set_keys)}: settings of how a parser makes trees, and this encoder "
            "has none: set tracker.predict_transitions: true (or a parser block), or leave "
            "them out"
        )
    soft = values["soft_stack"]
    rules: List[Rule] = [
        (values["beam_size"] < 1, f"beam_size must be at least 1, got {values['beam_size']}")
    ]
    if not soft:
        rules += [
            (
                values[key] != defaults[key],
                f"{key} is read only with soft_stack: true: leave it out",
            )
            for key in ("soft_at_test_time", "gumbel_straight_through", "parser_temperature")
        ]
    rules += [
        (
            values["parse_at_test_time"] is False and soft,
            # (true agrees: the soft stack parses at evaluation too; 0.2 archives write it out.)
            "parse_at_test_time: false would follow given trees, and the soft stack follows "
            "its own parser (soft_at_test_time chooses how): leave it out",
        ),
        (
            values["parse_at_test_time"] is False and values["beam_size"] > 1,
            "beam_size is read where the parser parses at evaluation, and parse_at_test_time: "
            "false follows the given trees: leave one of them out",
        ),
        (
            values["gumbel_straight_through"] and bool(values["soft_at_test_time"]),
            "soft_at_test_time: true is not followed with gumbel_straight_through, which "
            "evaluates on the discrete stack with the parser's greedy moves: leave it out",
        ),
    ]
    _raise_first(rules)


def check_legacy_key_read(setting: str, explicit: Any, key: str, value: Any, agrees: bool) -> None:
    """An old policy key next to the new policy that replaces it must say what it says."""
    if not agrees:
        raise SettingsError(
            f"{setting} {explicit} replaces what {key}: {value} would choose, so {key} would "
            "not be read: leave one of them out (for an archive's old key, override it as well)"
        )


# ----------------------------------------------------------------------------------------------
# A policy's arguments, and a pass that asks of it what it cannot give.
# ----------------------------------------------------------------------------------------------


def check_beam_mixture(
    width: int, soft_top_k: bool, mix: str, gumbel_scale: float, mixes: Sequence[str]
) -> None:
    """``beam_mixture``'s arguments; ``mixes``: the values ``mix`` may take."""
    _raise_first(
        [
            (gumbel_scale < 0, f"beam_mixture's gumbel_scale must be >= 0, got {gumbel_scale}"),
            (
                bool(gumbel_scale) and soft_top_k,
                "beam_mixture's gumbel_scale and soft_top_k do not go together",
            ),
            (width < 1, f"beam_mixture's width must be at least 1, got {width}"),
            (soft_top_k and width < 2, "beam_mixture's soft_top_k needs a width of at least 2"),
            (
                mix not in mixes,
                f"beam_mixture's mix must be one of {tuple(mixes)}, got {mix!r}",
            ),
        ]
    )


def check_beam_mixture_nodes(return_nodes: bool) -> None:
    """A beam mixture's sentence vector has no nodes of its own to return."""
    if return_nodes:
        raise SettingsError(
            "beam_mixture's sentence vector mixes several trees, which have no nodes in "
            "common: node states are not returned with it (use greedy or beam_search for them)"
        )


# ----------------------------------------------------------------------------------------------
# A model with its encoder, and what trains the encoder's parser.
# ----------------------------------------------------------------------------------------------


def check_parser_training(
    model: str,
    has_parser: bool,
    transition_loss_weight: float,
    policy_gradient: Optional[Any],
    training_policy_is_given: bool,
    encoder_transition_loss_weight: float,
    parser_learns_from_task: bool,
) -> None:
    """What a model can tell about its encoder's parser when it is built: a setting that trains
    a parser the encoder does not have, a policy gradient beside a training policy of the
    encoder's own, a transition loss set twice (the model's and the encoder's) are errors; a
    parser that nothing trains is a warning (it would pick every tree with an untrained argmax).
    ``model``: the model's registered name, for the messages."""
    if not has_parser:
        for setting, value in (
            ("transition_loss_weight", transition_loss_weight),
            ("policy_gradient", policy_gradient),
        ):
            if value:
                raise SettingsError(
                    f"{model}: {setting} trains a parser, and this encoder has none: leave it "
                    f"out, or give the encoder one (a spinn encoder with a tracker block with "
                    f"predict_transitions: true, or a parser block)"
                )
        return
    _raise_first(
        [
            (
                policy_gradient is not None and not training_policy_is_given,
                f"{model}: the policy_gradient samples the training trees itself, so the "
                "encoder's training_policy would not be followed: leave one of them out",
            ),
            (
                bool(transition_loss_weight and encoder_transition_loss_weight),
                f"{model}: both the model's transition_loss_weight ({transition_loss_weight}) "
                f"and the encoder's ({encoder_transition_loss_weight}) are set, so the "
                "transition loss would count twice: keep the model's and set "
                "encoder.transition_loss_weight to 0",
            ),
        ]
    )
    if not (
        transition_loss_weight
        or encoder_transition_loss_weight
        or policy_gradient
        or parser_learns_from_task
    ):
        logger.warning(
            "%s: nothing trains the encoder's parser (transition_loss_weight is 0, no "
            "policy_gradient, no soft training_policy): it will choose every tree it parses "
            "with an untrained argmax. Set transition_loss_weight above 0 (the SPINN paper's "
            "alpha, e.g. 3.9), or a policy_gradient to train it from the task alone; ignore "
            "this for a parser trained elsewhere and loaded.",
            model,
        )


def check_beam_mix(model: str, mix: str, classifies_each_tree: bool) -> None:
    """A beam mixture whose ``mix`` asks the model to classify each tree alone ("predictions",
    "best_tree") needs a model that does (``spinn_classifier``, ``spinn_nli``); any other would
    read the roots' mixture instead and train as ``mix: "roots"`` without a word. ``mix``: the
    encoder's training policy's ("roots" for any policy but a beam mixture)."""
    if mix != "roots" and not classifies_each_tree:
        raise SettingsError(
            f"{model}: the encoder's training_policy has mix {mix!r}, which asks the model to "
            f"classify each of the beam's trees alone, and {model} reads one sentence vector: "
            f'set mix to "roots" (the roots\' mixture), or use spinn_classifier or spinn_nli'
        )


def check_policy_gradient(
    running_std: float,
    normalize_advantage: Optional[bool],
    updates_per_batch: int,
    clip: float,
    draws: int,
    baseline: str,
    baselines: Sequence[str],
) -> None:
    """The ``policy_gradient`` block: REINFORCE's and PPO's settings."""
    _raise_first(
        [
            (
                not 0.0 <= running_std < 1.0,
                f"running_std is a decay in [0, 1), got {running_std}",
            ),
            (
                bool(running_std and normalize_advantage),
                "normalize_advantage (by the batch's standard deviation) and running_std (by a "
                "running one) are two ways to scale the advantages: choose one",
            ),
            (
                updates_per_batch < 1,
                f"updates_per_batch must be at least 1, got {updates_per_batch}",
            ),
            (not 0.0 < clip < 1.0, f"clip must be in (0, 1), got {clip}"),
            (draws < 1, f"draws must be at least 1, got {draws}"),
            (baseline not in baselines, f"baseline must be one of {baselines}, got {baseline!r}"),
            (
                baseline != "greedy" and draws < 2,
                f'baseline "{baseline}" compares an example\'s draws with each other: it needs '
                f"draws >= 2, got {draws}",
            ),
            (
                draws > 1 and updates_per_batch > 1,
                "draws > 1 and updates_per_batch > 1 (PPO) do not go together: PPO replays the "
                "training pass's trees only",
            ),
        ]
    )


def check_updates_taken(batches_not_taken: int, limit: int) -> None:
    """PPO's further updates (``updates_per_batch > 1``) need the callback that takes them:
    seen when ``limit`` training batches in a row left theirs untaken."""
    if batches_not_taken >= limit:
        raise SettingsError(
            "policy_gradient.updates_per_batch > 1 needs the trainer callback "
            f'{{"type": "parser_updates"}}: the further parser updates of the last {limit} '
            "training batches were never taken"
        )


# What the parser_updates callback says when no policy gradient makes further updates.
NO_UPDATES = (
    "parser_updates: the model gives no parser update; set the model's "
    "policy_gradient.updates_per_batch above 1, or drop this callback"
)


def check_parser_updates(uses_amp: bool, has_parser: bool, makes_further_updates: bool) -> None:
    """The ``parser_updates`` callback, with the trainer and the model it runs on."""
    _raise_first(
        [
            (uses_amp, "parser_updates does not support mixed precision (use_amp)"),
            (not has_parser, "parser_updates needs a spinn encoder with a parser"),
            (not makes_further_updates, NO_UPDATES),
        ]
    )


def check_further_updates_made(made: bool) -> None:
    """A batch under ``updates_per_batch > 1`` whose model handed the callback nothing."""
    if not made:
        raise SettingsError(
            "parser_updates: the model's policy_gradient made no parser update although its "
            "updates_per_batch is above 1; a model must train its parser through "
            "PolicyGradient.loss or classifier_loss (spinn_classifier and spinn_nli do)"
        )


def check_encoder_schedule(
    schedule: str, encoders_with_parser: int, encoders_with_setting: int, needs: str
) -> None:
    """A callback that schedules a setting of the encoder's parser (``encoder_schedule``):
    some encoder of the model must have a parser, and the setting."""
    _raise_first(
        [
            (
                encoders_with_parser == 0,
                f"{schedule} needs a spinn encoder with a parser (tracker.predict_transitions "
                "or a parser block)",
            ),
            (encoders_with_setting == 0, f"{schedule} needs {needs}"),
        ]
    )


# ----------------------------------------------------------------------------------------------
# Word vectors and the encoder they feed.
# ----------------------------------------------------------------------------------------------


def check_embedder_feeds_encoder(
    embedding_dim: int, input_dim: int, name: str, setting: str
) -> None:
    """A model's embedder must give word vectors of its encoder's input size (``name``: the
    model's parameter that holds the encoder; ``setting``: the encoder's input-size key)."""
    if embedding_dim != input_dim:
        raise SettingsError(
            f"the text_field_embedder gives word vectors of size {embedding_dim}, but the "
            f"{name}'s {setting} is {input_dim}: set {name}.{setting} to {embedding_dim} (or "
            f"change the embedder's size to {input_dim})"
        )


def check_word_vector_size(encoder: str, size: int, input_dim: int, setting: str) -> None:
    """The same at an encoder's pass, for models that never compare the two (AllenNLP's
    ``basic_classifier``): the word vectors it got against its input size."""
    if size != input_dim:
        raise SettingsError(
            f"{encoder} got word vectors of size {size}, but its {setting} is {input_dim}: set "
            f"the encoder's {setting} to the output size of the embedder that feeds it ({size})"
        )


def check_levelwise(follows_given: bool, has_tracker: bool) -> None:
    """The level-wise runner composes given trees a level at a time: no tracker, no policy of
    its own."""
    if not follows_given or has_tracker:
        raise SettingsError(
            "level-wise batching needs given trees and a composition without an extra input but "
            "the node input (tracking_dim = 0): a tracking LSTM makes every node depend on all "
            "earlier steps"
        )


def check_parser_logits(has_logits: bool, who: str) -> None:
    """A policy that reads the parser's logits at a step of a model without a parser (the
    guard of a runner called directly: a pass checks the same with :func:`check_policy`)."""
    if not has_logits:
        raise SettingsError(f"{who} needs a parser (predict_transitions=true)")


# ----------------------------------------------------------------------------------------------
# Models, and trainer callbacks with the trainer and model they run on.
# ----------------------------------------------------------------------------------------------


def check_label_names(label_names: Optional[Sequence[str]], num_labels: int) -> None:
    """``tree_node_classifier``'s names of its labels, one a label."""
    if label_names is not None and len(label_names) != num_labels:
        raise SettingsError(f"{len(label_names)} label names for {num_labels} labels")


def check_him_members(
    labels: Any, vocabulary: Mapping[str, Any], members: Mapping[str, Tuple[Any, Mapping[str, Any]]]
) -> None:
    """HIM's member models vote on one set of labels, read through one vocabulary: ``labels``
    and ``vocabulary`` (``{namespace: token-to-index mapping}``) are the HIM model's,
    ``members`` each member's pair of the same, by name."""
    if not members:
        raise SettingsError("HIM needs at least one member model")
    for name, (member_labels, member_vocabulary) in members.items():
        if member_labels != labels:
            raise SettingsError(f"member {name!r} orders the labels differently")
        for namespace, tokens in vocabulary.items():
            if member_vocabulary.get(namespace) != tokens:
                raise SettingsError(
                    f"member {name!r} has another vocabulary in namespace {namespace!r}"
                )


def check_gradient_clipping(
    uses_amp: bool, accumulation_steps: int, patterns_without_parameters: Sequence[str]
) -> None:
    """The ``module_gradient_clipping`` callback, with the trainer and the model's parameters
    (``patterns_without_parameters``: the groups' patterns that match none)."""
    rules: List[Rule] = [
        (uses_amp, "module_gradient_clipping does not support use_amp"),
        (
            accumulation_steps > 1,
            "module_gradient_clipping clips each batch's gradients after its backward pass: "
            "not with num_gradient_accumulation_steps > 1",
        ),
    ]
    rules += [
        (True, f"module_gradient_clipping: {pattern!r} matches no parameter")
        for pattern in patterns_without_parameters
    ]
    _raise_first(rules)


def check_validation_metric(has_metric: bool) -> None:
    """``reduce_on_plateau`` steps on the epoch's validation metric."""
    if not has_metric:
        raise SettingsError(
            "reduce_on_plateau needs a validation metric each epoch: give the trainer "
            "validation data (validation_data_path)"
        )


# ----------------------------------------------------------------------------------------------
# Readers, tree sources, predictors and the demo.
# ----------------------------------------------------------------------------------------------


def check_listops_trees(tree_shape: str, tree_shapes: Sequence[str], gold_trees: bool) -> None:
    """The ``listops`` reader's trees: a shape other than the gold one is made from them."""
    _raise_first(
        [
            (
                tree_shape not in tree_shapes,
                f"tree_shape {tree_shape!r}: expected one of {tuple(tree_shapes)}",
            ),
            (
                tree_shape != "gold" and not gold_trees,
                f"tree_shape {tree_shape!r} needs gold_trees: true",
            ),
        ]
    )


def check_typed_reduce_reading(reduce_types: bool, crop_pad_length: Optional[int]) -> None:
    """``snli_transitions``: REDUCE types are read from whole trees, which the paper's cropping
    and left padding cut."""
    if reduce_types and crop_pad_length is not None:
        raise SettingsError("reduce_types does not work with crop_pad_length")


def check_parser_archive(archive: str, has_parser: bool) -> None:
    """The ``spinn`` tree source parses with an archive's own parser."""
    if not has_parser:
        raise SettingsError(
            f"{archive}: the model has no parser (train one with training_config/spinn.jsonnet); "
            "it can't be a tree source"
        )


def check_tree_source_reader(setting: str, reader: str, makes_trees: bool) -> None:
    """A tree source (a predictor's ``tree_source``, the demo's ``--tree-source``) gives the
    trees a reader reads: the reader (``reader``: its class name) must read trees."""
    if not makes_trees:
        raise SettingsError(
            f"{setting} needs a reader that makes trees; this archive's reader is {reader} (its "
            "encoder composes the balanced tree)"
        )


def check_reads_examples(predictor: str, reader: str, reads_examples: bool) -> None:
    """A predictor that reads JSON lines through its reader's ``example_to_instance``."""
    if not reads_examples:
        raise SettingsError(
            f"the {predictor} predictor reads JSON lines through a reader with "
            f"example_to_instance (text_classification_transitions, listops), not {reader}"
        )
