"""The `spinn` encoder's settings: its blocks (checked together by the rule book,
``spinn_core.rules.check_encoder_settings``), and the translation of the old flat keys (0.1.0
and 0.2.0 configs) into the blocks and policies.

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
from typing import Any, Dict, List, Mapping, Optional, Tuple

from allennlp.common import FromParams

# (SettingsError: exported here too, where it was before the rule book.)
from spinn_allennlp.settings_errors import SettingsError, configuration_errors  # noqa: F401
from spinn_core import rules

logger = logging.getLogger(__name__)


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
    with configuration_errors():
        rules.check_legacy_tracker(config.get("tracker"))
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
    rules.check_legacy_policy_keys(values, POLICY_KEYS, has_parser)
    soft, gumbel = values["soft_stack"], values["gumbel_straight_through"]
    temperature = values["parser_temperature"]
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
                if key in set_keys:
                    agrees = _agrees(key, values[key], explicit)
                    rules.check_legacy_key_read(setting, explicit, key, values[key], agrees)
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
