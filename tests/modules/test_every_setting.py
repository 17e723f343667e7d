"""Every setting of the `spinn` encoder is read or refused, shown by behaviour: each one, set away
from its default (with what it needs), changes what the encoder computes (a training pass's
sentence vectors or gradients, an evaluation pass's vectors or trees) or how (the runner the
passes take, what they ask of CUDA graphs); a stored attribute alone does not count. Each
combination that would leave one unread is an error naming it. A setting added without a line
here fails the first test."""

import contextlib
import copy
import dataclasses
import inspect
from typing import Any, Dict, Iterator, List

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

import spinn_core.spinn as spinn_module
from spinn_allennlp.modules.encoder_settings import (
    MOVED_KEYS,
    POLICY_KEYS,
    ProjectionSettings,
    SpeedSettings,
    TrackerSettings,
)
from spinn_allennlp.modules.own_parser import OwnParser
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_core.graphs import GraphedPasses, GraphedSpinn
from spinn_core.policies import BeamSearch, Given

PARSER = {"tracker": {"tracking_dim": 3, "predict_transitions": True}}
TRACKER = {"tracker": {"tracking_dim": 3}}
OWN_PARSER = {"parser": {"hidden_dim": 3, "tracking_dim": 2}}
BEAM = {"type": "beam_search", "width": 2}

# setting -> (what it needs, the setting away from its default). Dotted names are block fields.
USED: Dict[str, Any] = {
    "input_dim": ({}, {"input_dim": 6}),
    "hidden_dim": ({}, {"hidden_dim": 5}),
    "tracker": ({}, TRACKER),
    "tracker.tracking_dim": (TRACKER, {"tracker": {"tracking_dim": 4}}),
    "tracker.predict_transitions": (TRACKER, PARSER),
    "tracker.reduce_types": (PARSER, {"tracker": {**PARSER["tracker"], "reduce_types": 2}}),
    "tracker.type_dim": (
        {"tracker": {**PARSER["tracker"], "reduce_types": 2}},
        {"tracker": {**PARSER["tracker"], "reduce_types": 2, "type_dim": 5}},
    ),
    "tracker.summary_dim": (TRACKER, {"tracker": {"tracking_dim": 3, "summary_dim": 2}}),
    # (Without a parser nothing would read the tracker: refused, below.)
    "tracker.composition_reads_tracker": (
        PARSER,
        {"tracker": {**PARSER["tracker"], "composition_reads_tracker": False}},
    ),
    # The same values, other gradients: checked on the gradients.
    "tracker.parser_trains_nodes": (
        PARSER,
        {"tracker": {"tracking_dim": 3, "predict_transitions": True, "parser_trains_nodes": False}},
    ),
    "parser": ({}, OWN_PARSER),
    "composition": ({}, {"composition": "treernn"}),
    "projection": ({}, {"projection": {"batch_norm": True}}),
    "projection.dropout": ({}, {"projection": {"dropout": 0.5}}),
    "projection.batch_norm": ({}, {"projection": {"batch_norm": True}}),
    "training_policy": (PARSER, {**PARSER, "training_policy": {"type": "greedy"}}),
    "evaluation_policy": (PARSER, {**PARSER, "evaluation_policy": {"type": "given"}}),
    "transition_loss_weight": (PARSER, {**PARSER, "transition_loss_weight": 2.0}),
    "strength_entropy_weight": (
        {**PARSER, "training_policy": {"type": "soft"}},
        {**PARSER, "training_policy": {"type": "soft"}, "strength_entropy_weight": 0.5},
    ),
    "speed": ({}, {"speed": {"levelwise": False}}),
    "speed.levelwise": ({}, {"speed": {"levelwise": False}}),
    "speed.mixed_precision": ({}, {"speed": {"mixed_precision": "bf16"}}),
    "speed.cuda_graphs": ({}, {"speed": {"cuda_graphs": True}}),
    # (Batches of 3 sentences: padded to 8 by default, to 16 here.)
    "speed.graph_batch_size": (
        {"speed": {"cuda_graphs": True}},
        {"speed": {"cuda_graphs": True, "graph_batch_size": 16}},
    ),
    "vocab": (
        {"parser": {"hidden_dim": 3, "tracking_dim": 2, "embedding_dim": 2}},
        {"parser": {"hidden_dim": 3, "tracking_dim": 2, "embedding_dim": 2}},
    ),
}

BLOCKS = {"tracker": TrackerSettings, "projection": ProjectionSettings, "speed": SpeedSettings}


def all_settings():
    names = [n for n in inspect.signature(SpinnEncoder).parameters]
    for block, cls in BLOCKS.items():
        names += [f"{block}.{field.name}" for field in dataclasses.fields(cls)]
    return names


def build(config: Dict[str, Any], vocab_size: int = 7) -> SpinnEncoder:
    vocab = Vocabulary()
    for index in range(vocab_size):
        vocab.add_token_to_namespace(f"w{index}")
    # (Params consume the dicts they are given: a copy, so the tables here stay whole.)
    params = Params(copy.deepcopy({"type": "spinn", "input_dim": 4, "hidden_dim": 3, **config}))
    encoder = Seq2VecEncoder.from_params(params, vocab=vocab)
    assert isinstance(encoder, SpinnEncoder)
    return encoder


@contextlib.contextmanager
def observed() -> Iterator[Dict[str, List[Any]]]:
    """Records what the passes inside it do beyond their values: the runner each takes (the
    runner picker's choice), and each pass that reaches CUDA graphs with the shape of the
    bucket its batch is padded to (on the CPU, where no graph is captured, the bucketed
    static-shape pass a GPU would capture: ``GraphedPasses`` with ``capture=False``)."""
    seen: Dict[str, List[Any]] = {"runners": [], "graphs": []}
    pick_runner, graphed_call = spinn_module.pick_runner, GraphedSpinn.__call__

    def recorded_pick(*args, **kwargs):
        runner = pick_runner(*args, **kwargs)
        seen["runners"].append(runner.__name__)
        return runner

    def recorded_graphs(self, inputs, mask, transitions=None, **kwargs):
        passes = GraphedPasses(self.spinn, self.batch_size, self.length_edges, capture=False)
        policy = self.spinn.checked_policy(kwargs.get("policy") or Given(), transitions, None, None)
        bucketed = passes.bucket(inputs, mask, transitions, policy)
        seen["graphs"].append(None if bucketed is None else tuple(bucketed.args[0].shape))
        return graphed_call(self, inputs, mask, transitions, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spinn_module, "pick_runner", recorded_pick)
        patch.setattr(GraphedSpinn, "__call__", recorded_graphs)
        yield seen


def fingerprint(encoder: SpinnEncoder) -> Dict[str, Any]:
    """What a setting changes, as the encoder behaves (no stored attribute counts): a training
    pass's sentence vectors and every gradient, an evaluation pass's sentence vectors and
    transitions (both on the same gold trees, the same seed), which runners the passes took and
    what they asked of CUDA graphs. float32: mixed precision rounds it (float64 is never cast)."""
    size = encoder.get_input_dim()
    torch.manual_seed(0)
    inputs = torch.randn(3, 4, size)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 0]]).bool()
    gold = torch.tensor([[0, 0, 1, 0, 1, 0, 1], [0, 0, 0, 1, 1, -1, -1], [0, 0, 1, -1, -1, -1, -1]])
    torch.manual_seed(0)
    for parameter in encoder.parameters():
        torch.nn.init.uniform_(parameter, -0.5, 0.5)
    tokens = torch.ones(3, 4, dtype=torch.long) if encoder.parser_reads_token_ids else None
    with observed() as seen:
        encoder.train()
        torch.manual_seed(1)
        output = encoder.encode(inputs, mask, gold, parser_tokens=tokens)
        sentence = encoder(inputs, mask, gold) if tokens is None else output.sentence
        sentence.sum().backward()
        encoder.eval()
        with torch.no_grad():
            evaluated = encoder.encode(inputs, mask, gold, parser_tokens=tokens)
    gradients = {n: p.grad.clone() for n, p in encoder.named_parameters() if p.grad is not None}
    return {
        "sentence": sentence.detach(),
        "gradients": gradients,
        "evaluation": (evaluated.sentence, evaluated.transitions),
        "runners": seen["runners"],
        "graphs": seen["graphs"],
    }


def differ(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    if a["runners"] != b["runners"] or a["graphs"] != b["graphs"]:
        return True
    for name in ("sentence",):
        if a[name].shape != b[name].shape or not torch.equal(a[name], b[name]):
            return True
    for x, y in zip(a["evaluation"], b["evaluation"]):
        if x.shape != y.shape or not torch.equal(x, y):
            return True
    if a["gradients"].keys() != b["gradients"].keys():
        return True
    return any(
        a["gradients"][n].shape != b["gradients"][n].shape
        or not torch.equal(a["gradients"][n], b["gradients"][n])
        for n in a["gradients"]
    )


def test_the_fingerprint_of_one_setting_is_repeatable():
    """The same settings, built twice, behave the same (so a difference is the setting's)."""
    for config in ({}, PARSER, OWN_PARSER, {"speed": {"cuda_graphs": True}}):
        assert not differ(fingerprint(build(config)), fingerprint(build(config)))


def test_every_setting_has_a_line_here():
    assert sorted(all_settings()) == sorted(USED)


@pytest.mark.parametrize("setting", sorted(USED))
def test_each_setting_changes_the_encoder(setting):
    needs, changed = USED[setting]
    if setting == "vocab":
        # The parser's own embeddings are as many as the vocabulary's tokens.
        small, large = build(needs, vocab_size=5), build(changed, vocab_size=9)
        assert differ(fingerprint(small), fingerprint(large))
        return
    assert differ(fingerprint(build(needs)), fingerprint(build(changed)))


REFUSED = [
    ({"tracker": {"tracking_dim": 0}}, "tracker.tracking_dim must be positive"),
    ({"tracker": {"tracking_dim": 3, "type_dim": 4}}, "tracker.type_dim is the size"),
    ({**TRACKER, "speed": {"levelwise": True}}, "speed.levelwise is read only without"),
    ({"speed": {"graph_batch_size": 8}}, "speed.graph_batch_size is read only with"),
    ({"speed": {"mixed_precision": "fp16"}}, "speed.mixed_precision must be one of"),
    ({"projection": {"dropout": 1.0}}, "projection.dropout is a drop rate"),
    ({"composition": "gru"}, "composition must be one of"),
    ({"transition_loss_weight": 1.0}, "transition_loss_weight trains a parser"),
    ({"training_policy": {"type": "greedy"}}, "training_policy Greedy reads the parser"),
    ({"evaluation_policy": {"type": "soft"}}, "evaluation_policy SoftStrengths reads"),
    ({**PARSER, "strength_entropy_weight": 0.1}, "strength_entropy_weight sharpens"),
    (
        {
            **PARSER,
            "training_policy": {"type": "straight_through_gumbel"},
            "strength_entropy_weight": 1,
        },
        "strength_entropy_weight sharpens",
    ),
    (
        {
            "tracker": {"tracking_dim": 3, "predict_transitions": True, "summary_dim": 2},
            "training_policy": {"type": "soft"},
        },
        "tracker.summary_dim.* soft stack",
    ),
    ({**OWN_PARSER, "training_policy": {"type": "soft"}}, "parser block drives a discrete stack"),
    ({**OWN_PARSER, **PARSER}, "parser block does not go with tracker.predict_transitions"),
    (
        {**OWN_PARSER, "tracker": {"tracking_dim": 3, "reduce_types": 2}},
        "parser block does not go with tracker.reduce_types",
    ),
    ({"training_policy": {"type": "beam_mixture"}}, "beam_mixture.*width"),
    (
        {"tracker": {"tracking_dim": 3, "composition_reads_tracker": False}},
        "composition_reads_tracker: false without tracker.predict_transitions",
    ),
    (
        {**OWN_PARSER, "tracker": {"tracking_dim": 3, "composition_reads_tracker": False}},
        "composition_reads_tracker: false without tracker.predict_transitions",
    ),
    (
        {"parser": {"hidden_dim": 3, "tracking_dim": 2, "vocab_namespace": "parser_tokens"}},
        "parser.vocab_namespace .* read only with parser.embedding_dim > 0",
    ),
    ({"composition": {"type": "grc", "depth": 2}}, "composition 'grc'.*depth"),
]


@pytest.mark.parametrize("config, named", REFUSED)
def test_combinations_that_would_leave_a_setting_unread_are_refused_by_name(config, named):
    with pytest.raises(ValueError, match=named):
        build(config)


OLD_REFUSED = [
    ({"predict_transitions": True}, "predict_transitions need a tracking LSTM"),
    ({"tracking_dim": 3, "parser_temperature": 0.5}, "parser_temperature: settings of how"),
    ({**PARSER, "parser_temperature": 0.5}, "parser_temperature is read only with soft_stack"),
    ({**PARSER, "soft_at_test_time": False}, "soft_at_test_time is read only with soft_stack"),
    (
        {**PARSER, "gumbel_straight_through": True},
        "gumbel_straight_through is read only with soft_stack",
    ),
    (
        {**PARSER, "soft_stack": True, "parse_at_test_time": False},
        "parse_at_test_time: false would follow given trees",
    ),
    ({**PARSER, "beam_size": 3, "parse_at_test_time": False}, "leave one of them out"),
    ({**PARSER, "beam_size": 0}, "beam_size must be at least 1"),
    (
        {**PARSER, "parse_at_test_time": False, "evaluation_policy": {"type": "greedy"}},
        "parse_at_test_time: False would choose",
    ),
    (
        {**PARSER, "beam_size": 4, "evaluation_policy": {"type": "beam_search", "width": 2}},
        "beam_size: 4 would choose",
    ),
]


def test_old_keys_that_agree_with_a_new_policy_stay_quiet():
    """An archive's old keys beside a new-form policy (an `--overrides` at evaluation): where
    they choose what the policy does, the policy is followed; a contradiction is refused."""
    parsed = build({**PARSER, "parse_at_test_time": True, "evaluation_policy": BEAM})
    assert repr(parsed.evaluation_policy) == repr(
        build({**PARSER, "evaluation_policy": BEAM}).evaluation_policy
    )
    same = build({**PARSER, "beam_size": 2, "evaluation_policy": BEAM})
    assert isinstance(same.evaluation_policy, BeamSearch) and same.evaluation_policy.width == 2


@pytest.mark.parametrize("config, named", OLD_REFUSED)
def test_old_keys_that_would_not_be_read_are_refused_by_name(config, named):
    with pytest.raises(ValueError, match=named):
        build(config)


def test_every_old_key_is_translated_into_what_it_chose():
    """Each old key (0.1/0.2 configs) lands where the table of docs/configuration.md says, and
    builds the encoder the new form builds."""
    old = {
        "tracking_dim": 3,
        "predict_transitions": True,
        "reduce_types": 2,
        "type_dim": 5,
        "composition_reads_tracker": False,
        "parser_trains_nodes": False,
        "projection_dropout": 0.25,
        "projection_batch_norm": True,
        "mixed_precision": "bf16",
        "self_transition_prob": 0.5,
        "beam_size": 3,
    }
    new = {
        "tracker": {
            "tracking_dim": 3,
            "predict_transitions": True,
            "reduce_types": 2,
            "type_dim": 5,
            "composition_reads_tracker": False,
            "parser_trains_nodes": False,
        },
        "projection": {"dropout": 0.25, "batch_norm": True},
        "speed": {"mixed_precision": "bf16"},
        "training_policy": {"type": "mixed", "self_transition_prob": 0.5},
        "evaluation_policy": {"type": "beam_search", "width": 3},
    }
    with pytest.warns(DeprecationWarning, match="tracker.tracking_dim"):
        translated = build(old)
    assert fingerprint_without_pass(translated) == fingerprint_without_pass(build(new))
    soft = build({**PARSER, "soft_stack": True, "parser_temperature": 0.5, "summary_dim": 0})
    assert repr(soft.training_policy) == "SoftStrengths(temperature=0.5)"
    assert repr(soft.evaluation_policy) == "SoftStrengths(temperature=0.5)"
    # Old defaults written out mean nothing (a levelwise: true beside a tracker is not an error).
    flat = build({"tracking_dim": 3, "levelwise": True, "cuda_graphs": True, "summary_dim": 2})
    assert flat.spinn.summaries is not None and flat.cuda_graphs is not None
    assert set(MOVED_KEYS) | set(POLICY_KEYS) >= set(old)


def fingerprint_without_pass(encoder: SpinnEncoder) -> Dict[str, Any]:
    state = {name: tuple(value.shape) for name, value in encoder.state_dict().items()}
    policies = (repr(encoder.training_policy), repr(encoder.evaluation_policy))
    return {"state": state, "policies": policies, "precision": encoder.mixed_precision}


def test_an_own_parser_block_from_python_is_the_same_as_from_a_config():
    encoder = SpinnEncoder(4, 3, parser=OwnParser(hidden_dim=3, tracking_dim=2))
    assert fingerprint_without_pass(encoder) == fingerprint_without_pass(build(OWN_PARSER))
