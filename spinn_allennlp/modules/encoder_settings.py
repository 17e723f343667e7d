"""The `spinn` encoder's settings: its blocks, the one rule book of which settings go together,
and the translation of the old flat keys (0.1.0 and 0.2.0 configs) into the blocks and
policies.

A config chooses a variant by its parts, not by flags::

    "encoder": {
      "type": "spinn", "input_dim": 300, "hidden_dim": 300,
      "tracker": {"tracking_dim": 64, "predict_transitions": true},
      "projection": {"dropout": 0.1},
      "training_policy": {"type": "given"},
      "evaluation_policy": {"type": "beam_search", "width": 4}
    }

How trees are made is the pair of policies alone (``spinn_core.policies``); the old keys that
chose them (``soft_stack``, ``beam_size``, ...) are translated by :func:`translate_legacy_keys`,
with a deprecation warning naming the new form, so every committed config and archive loads.
"""

import logging
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError

from spinn_core.compositions import CompositionSetting, composition_choice
from spinn_core.policies import StraightThroughGumbel, TransitionPolicy

if TYPE_CHECKING:
    from spinn_allennlp.modules.own_parser import OwnParser

logger = logging.getLogger(__name__)


class SettingsError(ConfigurationError, ValueError):
    """Settings of the encoder that cannot work together, or one that would not be read: an
    AllenNLP ConfigurationError, and a ValueError for Python callers."""


# The `mixed_precision` values.
MIXED_PRECISION_VALUES = ("bf16",)
# The REDUCE type embedding's size when `type_dim` is left out.
DEFAULT_TYPE_DIM = 16


@dataclass(frozen=True)
class TrackerSettings(FromParams):
    """The `"tracker"` block: the tracking LSTM (§3.3) and the parser on its state.

    tracking_dim: the LSTM's size. predict_transitions: a SHIFT/REDUCE classifier on its state
    (eq. 5), the full SPINN's parser. reduce_types: typed REDUCE (NSHRDLU §3.3), the number of
    types, each a learned embedding (`type_dim`, default 16) joining the composition's input;
    with a parser, a classifier predicts the type. summary_dim: LSTM summaries of the whole
    stack and buffer read by the tracker (NSHRDLU §3.1). composition_reads_tracker: whether the
    tracker's state joins the composition's input (false: the tracker is the parser's own
    network). parser_trains_nodes: whether gradients pass from the tracker into the nodes it
    reads (false: Havrylov et al.'s disjoint syntax and semantics; values unchanged)."""

    tracking_dim: int
    predict_transitions: bool = False
    reduce_types: int = 0
    type_dim: Optional[int] = None
    summary_dim: int = 0
    composition_reads_tracker: bool = True
    parser_trains_nodes: bool = True


@dataclass(frozen=True)
class ProjectionSettings(FromParams):
    """The `"projection"` block: the leaves' linear projection of the word vectors (eq. 4),
    with a drop rate and batch normalisation over real tokens."""

    dropout: float = 0.0
    batch_norm: bool = False


@dataclass(frozen=True)
class SpeedSettings(FromParams):
    """The `"speed"` block: settings that change how fast a pass runs, not what it computes
    (docs/speed.md). levelwise: SPINN-PI-NT composes one tree level at a time (default true;
    read only without a tracker). mixed_precision: "bf16" runs the passes under autocast.
    cuda_graphs: replay passes on CUDA from graphs, batches padded to `graph_batch_size`."""

    levelwise: Optional[bool] = None
    mixed_precision: Optional[str] = None
    cuda_graphs: bool = False
    graph_batch_size: Optional[int] = None


# The old flat keys that moved into a block: key -> (block, field).
MOVED_KEYS: Dict[str, Tuple[str, str]] = {
    "tracking_dim": ("tracker", "tracking_dim"),
    "predict_transitions": ("tracker", "predict_transitions"),
    "reduce_types": ("tracker", "reduce_types"),
    "type_dim": ("tracker", "type_dim"),
    "summary_dim": ("tracker", "summary_dim"),
    "composition_reads_tracker": ("tracker", "composition_reads_tracker"),
    "parser_trains_nodes": ("tracker", "parser_trains_nodes"),
    "projection_dropout": ("projection", "dropout"),
    "projection_batch_norm": ("projection", "batch_norm"),
    "levelwise": ("speed", "levelwise"),
    "mixed_precision": ("speed", "mixed_precision"),
    "cuda_graphs": ("speed", "cuda_graphs"),
    "graph_batch_size": ("speed", "graph_batch_size"),
}

# The old keys that chose the policies, with the value that meant "not set".
POLICY_KEYS: Dict[str, Any] = {
    "parse_at_test_time": None,
    "self_transition_prob": 0.0,
    "soft_stack": False,
    "soft_at_test_time": None,
    "parser_temperature": 1.0,
    "gumbel_straight_through": False,
    "beam_size": 1,
}

# The old block values that meant "not set" (left out of the translation).
_BLOCK_DEFAULTS: Dict[str, Any] = {
    "tracking_dim": 0,
    "predict_transitions": False,
    "reduce_types": 0,
    "summary_dim": 0,
    "composition_reads_tracker": True,
    "parser_trains_nodes": True,
    "type_dim": DEFAULT_TYPE_DIM,
    "projection_dropout": 0.0,
    "projection_batch_norm": False,
    "levelwise": True,
    "cuda_graphs": False,
}


def translate_legacy_keys(config: Mapping[str, Any]) -> Dict[str, Any]:
    """A `spinn` encoder config (without its `"type"`) in the new form: the old flat keys moved
    into their blocks (`tracker`, `projection`, `speed`) and the old policy keys turned into
    `training_policy` / `evaluation_policy`. A config already in the new form is returned as it
    is; otherwise one warning names each old key's new form. An old key next to its block
    (e.g. an `--overrides` of `model.encoder.tracking_dim` on a new config) sets that field."""
    config = dict(config)
    old = [key for key in (*MOVED_KEYS, *POLICY_KEYS) if key in config]
    if not old:
        return config
    moved: List[str] = []
    for key, (block, field) in MOVED_KEYS.items():
        if key not in config:
            continue
        value = config.pop(key)
        moved.append(f"{key} -> {block}.{field}")
        if value == _BLOCK_DEFAULTS.get(key, object()) or value is None:
            continue  # the old default, written out: nothing to set
        config[block] = {**dict(config.get(block) or {}), field: value}
    tracker = config.get("tracker")
    if tracker is not None and not tracker.get("tracking_dim"):
        needs = sorted(k for k in tracker if k != "tracking_dim")
        raise SettingsError(
            f"{', '.join(needs)} need a tracking LSTM: set tracker.tracking_dim > 0 "
            f"(tracking_dim in the old form)"
        )
    policies = _translate_policy_keys(config)
    message = (
        "spinn encoder: old config keys translated; the new form is "
        + "; ".join(moved + policies)
        + " (docs/configuration.md lists every setting)"
    )
    warnings.warn(message, DeprecationWarning, stacklevel=2)
    logger.warning(message)
    return config


def _translate_policy_keys(config: Dict[str, Any]) -> List[str]:
    """Pops the old policy keys off ``config`` and sets the policies they chose (only those
    that differ from the defaults). Returns what was translated, for the warning."""
    values = {key: config.pop(key, default) for key, default in POLICY_KEYS.items()}
    set_keys = [key for key, default in POLICY_KEYS.items() if values[key] != default]
    if not set_keys:
        return []
    has_parser = bool((config.get("tracker") or {}).get("predict_transitions")) or bool(
        config.get("parser")
    )
    if not has_parser:
        raise SettingsError(
            f"{', '.join(set_keys)}: settings of how a parser makes trees, and this encoder has "
            "none: set tracker.predict_transitions: true (or a parser block), or leave them out"
        )
    if values["beam_size"] < 1:
        raise SettingsError(f"beam_size must be at least 1, got {values['beam_size']}")
    soft, gumbel = values["soft_stack"], values["gumbel_straight_through"]
    temperature = values["parser_temperature"]
    if not soft:
        for key in ("soft_at_test_time", "gumbel_straight_through", "parser_temperature"):
            if values[key] != POLICY_KEYS[key]:
                raise SettingsError(f"{key} is read only with soft_stack: true: leave it out")
    if values["parse_at_test_time"] is False and soft:
        # (true agrees: the soft stack parses at evaluation too; 0.2 archives write it out.)
        raise SettingsError(
            "parse_at_test_time: false would follow given trees, and the soft stack follows "
            "its own parser (soft_at_test_time chooses how): leave it out"
        )
    if values["parse_at_test_time"] is False and values["beam_size"] > 1:
        raise SettingsError(
            "beam_size is read where the parser parses at evaluation, and parse_at_test_time: "
            "false follows the given trees: leave one of them out"
        )
    if gumbel and values["soft_at_test_time"]:
        raise SettingsError(
            "soft_at_test_time: true is not followed with gumbel_straight_through, which "
            "evaluates on the discrete stack with the parser's greedy moves: leave it out"
        )
    tempered = {} if temperature == 1.0 else {"temperature": temperature}
    own_parse: Dict[str, Any] = (
        {"type": "beam_search", "width": values["beam_size"]}
        if values["beam_size"] > 1
        else {"type": "greedy"}
    )
    if soft:
        training = {"type": "straight_through_gumbel" if gumbel else "soft", **tempered}
        soft_at_test = values["soft_at_test_time"] is not False and not gumbel
        evaluation = {"type": "soft", **tempered} if soft_at_test else own_parse
    else:
        p = values["self_transition_prob"]
        training = {"type": "mixed", "self_transition_prob": p} if p > 0 else {"type": "given"}
        evaluation = own_parse if values["parse_at_test_time"] is not False else {"type": "given"}
    sides = {
        "training_policy": (training, ("self_transition_prob", "gumbel_straight_through")),
        "evaluation_policy": (
            evaluation,
            ("beam_size", "parse_at_test_time", "soft_at_test_time"),
        ),
    }
    translated = []
    for setting, (policy, deciding) in sides.items():
        explicit = config.get(setting)
        if explicit is not None:
            # An old key that says what the new policy says is fine (an archive's config,
            # overridden with the new form); one that contradicts it would not be read.
            for key in deciding:
                if key in set_keys and not _agrees(key, values[key], explicit):
                    raise SettingsError(
                        f"{setting} {explicit} replaces what {key}: {values[key]} would "
                        f"choose, so {key} would not be read: leave one of them out (for an "
                        f"archive's old key, override it as well)"
                    )
            continue
        default = {"type": "given"} if setting == "training_policy" else {"type": "greedy"}
        if policy != default:
            config[setting] = policy
            translated.append(f"{setting}: {policy}")
    return [f"{', '.join(set_keys)} -> " + ("; ".join(translated) or "the default policies")]


def _agrees(key: str, value: Any, policy: Any) -> bool:
    """Whether the old policy key ``key`` set to ``value`` chooses what the config ``policy``
    (``{"type": ...}``) does."""
    if not isinstance(policy, Mapping):
        return False
    kind = policy.get("type")
    if key == "parse_at_test_time":
        return (kind != "given") == bool(value)
    if key == "soft_at_test_time":
        return (kind == "soft") == bool(value)
    if key == "beam_size":
        return kind == "beam_search" and policy.get("width") == value
    if key == "self_transition_prob":
        return kind == "mixed" and policy.get("self_transition_prob") == value
    return kind == "straight_through_gumbel"  # gumbel_straight_through


def _composition_problem(composition: CompositionSetting) -> Optional[str]:
    """What is wrong with the `composition` setting (not a registered name, or arguments its
    class does not take), or None."""
    try:
        composition_choice(composition)
    except ValueError as error:
        return str(error)
    return None


def check_encoder_settings(
    input_dim: int,
    hidden_dim: int,
    tracker: Optional[TrackerSettings],
    parser: Optional["OwnParser"],
    composition: CompositionSetting,
    projection: ProjectionSettings,
    training_policy: TransitionPolicy,
    evaluation_policy: TransitionPolicy,
    transition_loss_weight: float,
    strength_entropy_weight: float,
    speed: SpeedSettings,
) -> None:
    """The rule book: raises ConfigurationError for settings that cannot work together or that
    would not be read, naming the key to change. Every rule on the encoder's settings is here
    (the core checks its own arguments again, `spinn_core.spinn.check_options`, for users of
    the core)."""
    predicts = tracker is not None and tracker.predict_transitions
    has_own_parser = parser is not None
    has_parser = predicts or has_own_parser
    policies = {"training_policy": training_policy, "evaluation_policy": evaluation_policy}
    soft = [name for name, policy in policies.items() if policy.soft]
    composition_problem = _composition_problem(composition)
    rules = [
        (
            input_dim < 1 or hidden_dim < 1,
            f"input_dim and hidden_dim must be positive, got {input_dim}, {hidden_dim}",
        ),
        (composition_problem is not None, str(composition_problem)),
        (
            not 0.0 <= projection.dropout < 1.0,
            f"projection.dropout is a drop rate in [0, 1), got {projection.dropout} (the "
            "paper's tables give keep rates: drop = 1 - keep)",
        ),
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
        (
            transition_loss_weight != 0 and not has_parser,
            "transition_loss_weight trains a parser: it needs tracker.predict_transitions: "
            "true or a parser block",
        ),
    ]
    rules += _tracker_rules(tracker, has_own_parser, soft)
    rules += _parser_block_rules(parser)
    rules += _policy_rules(policies, has_parser, strength_entropy_weight)
    for broken, message in rules:
        if broken:
            raise SettingsError(message)


def _policy_rules(
    policies: Dict[str, TransitionPolicy], has_parser: bool, strength_entropy_weight: float
) -> List[Tuple[bool, str]]:
    """(broken, message) of the rules on the two policies."""
    rules = []
    for name, policy in policies.items():
        kind = type(policy).__name__
        rules.append(
            (
                policy.needs_parser and not has_parser,
                f"{name} {kind} reads the parser's logits, and this encoder has no parser: "
                f"give it one (tracker.predict_transitions: true, or a parser block), or, for "
                f"a policy of your own that does not read step.logits, set needs_parser = "
                f"False on its class",
            )
        )
    training_policy = policies["training_policy"]
    rules.append(
        (
            strength_entropy_weight != 0
            and not (
                training_policy.soft and not isinstance(training_policy, StraightThroughGumbel)
            ),
            "strength_entropy_weight sharpens the soft stack's strengths in training: it needs "
            'training_policy {"type": "soft"} (straight-through Gumbel\'s are already 0 or 1)',
        )
    )
    return rules


def _tracker_rules(
    tracker: Optional[TrackerSettings], has_own_parser: bool, soft: List[str]
) -> List[Tuple[bool, str]]:
    """The rules on the tracker block and what it goes with."""
    if tracker is None:
        return [
            (
                has_own_parser and bool(soft),
                f"a parser block drives a discrete stack: {' and '.join(soft)} cannot be soft",
            )
        ]
    sizes = (tracker.tracking_dim, tracker.summary_dim, tracker.reduce_types)
    return [
        (
            tracker.tracking_dim < 1,
            "tracker.tracking_dim must be positive (no tracker: leave the block out)",
        ),
        (
            min(sizes) < 0,
            "tracker.summary_dim and tracker.reduce_types must be >= 0, got "
            f"{tracker.summary_dim}, {tracker.reduce_types}",
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
        (
            has_own_parser and bool(soft),
            f"a parser block drives a discrete stack: {' and '.join(soft)} cannot be soft",
        ),
        (
            bool(soft) and tracker.summary_dim > 0,
            "stack and buffer summaries (tracker.summary_dim) are not implemented on the soft "
            f"stack, which {' and '.join(soft)} drive: set summary_dim to 0",
        ),
        (
            not tracker.predict_transitions and not tracker.composition_reads_tracker,
            "tracker.composition_reads_tracker: false without tracker.predict_transitions: "
            "nothing would read the tracker (no parser scores from it, and the composition "
            "leaves it out), though it runs at every step: leave the tracker block out",
        ),
    ]


def _parser_block_rules(parser: Optional["OwnParser"]) -> List[Tuple[bool, str]]:
    """The rules on the parser block's own settings."""
    if parser is None:
        return []
    return [
        (
            parser.vocab_namespace != "tokens" and not parser.embedding_dim,
            "parser.vocab_namespace names the vocabulary of the parser's own embeddings: it "
            "is read only with parser.embedding_dim > 0 (0: the parser reads the word vectors)",
        )
    ]
