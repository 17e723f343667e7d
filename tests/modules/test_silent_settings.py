"""Settings that would be silently ignored are errors, and a parser that nothing trains is a
warning when the model is built: the shipped configs with one setting changed, built as
`allennlp train` builds them (Params of the config file, overrides applied)."""

import json
import logging

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

import spinn_allennlp  # noqa: F401  (registers the models the configs name)
from spinn_core.policies import Greedy, SoftStrengths, StraightThroughGumbel
from spinn_core.testing.paths import CONFIGS_ROOT
from tools.testing.configs import listops_config

SPINN = CONFIGS_ROOT / "spinn.jsonnet"
PI_NT = CONFIGS_ROOT / "pair_classification" / "spinn_pi_nt.jsonnet"


def build(config, **overrides):
    params = Params.from_file(str(config), json.dumps(overrides))
    vocab = Vocabulary()
    for label in ("entailment", "neutral", "contradiction"):
        vocab.add_token_to_namespace(label, "labels")
    vocab.add_token_to_namespace("word")
    return Model.from_params(params=params.pop("model"), vocab=vocab)


def test_the_papers_config_without_its_transition_loss_warns_at_once(caplog):
    """`allennlp train training_config/spinn.jsonnet -o '{"model.transition_loss_weight": 0.0}'`:
    the L2 regularizer still reaches the parser's weights, so only the model can tell."""
    with caplog.at_level(logging.WARNING):
        build(SPINN)
    assert "nothing trains the encoder's parser" not in caplog.text
    with caplog.at_level(logging.WARNING):
        build(SPINN, **{"model.transition_loss_weight": 0.0})
    assert "spinn_nli: nothing trains the encoder's parser" in caplog.text
    assert "transition_loss_weight above 0" in caplog.text


def test_a_parser_trained_by_the_task_alone_is_not_warned_about(caplog):
    with caplog.at_level(logging.WARNING):
        build(listops_config("own_parser_best_draw"))
        build(listops_config("spinn_model4"))
    assert "nothing trains" not in caplog.text


def test_a_transition_loss_on_an_encoder_without_a_parser_is_an_error():
    with pytest.raises(ConfigurationError, match="spinn_nli: transition_loss_weight trains a"):
        build(PI_NT, **{"model.transition_loss_weight": 3.9})
    with pytest.raises(ConfigurationError, match="spinn_classifier: policy_gradient trains a"):
        build(listops_config("spinn_pi_nt"), **{"model.policy_gradient": {"entropy_weight": 0.0}})


def test_the_transition_loss_set_twice_is_an_error():
    with pytest.raises(ConfigurationError, match="would count twice"):
        build(SPINN, **{"model.encoder.transition_loss_weight": 1.0})


def test_a_training_policy_beside_a_policy_gradient_is_an_error():
    with pytest.raises(ConfigurationError, match="training_policy would not be followed"):
        build(
            listops_config("own_parser_best_draw"),
            **{"model.encoder.training_policy": {"type": "greedy"}},
        )


@pytest.mark.parametrize(
    "options, named",
    [
        ({"soft_at_test_time": False}, "soft_at_test_time: settings of how a parser"),
        ({"parse_at_test_time": False}, "parse_at_test_time: settings of how a parser"),
        (
            {
                "tracking_dim": 3,
                "predict_transitions": True,
                "soft_stack": True,
                "gumbel_straight_through": True,
                "soft_at_test_time": True,
            },
            "not followed with gumbel_straight_through",
        ),
    ],
)
def test_evaluation_switches_on_encoders_that_do_not_read_them_are_errors(options, named):
    """The old keys, as a 0.2 config gives them: translated, or refused by name."""
    with pytest.raises(ValueError, match=named):
        old_config(**options)


def old_config(**options):
    params = {"type": "spinn", "input_dim": 5, "hidden_dim": 4, **options}
    return Seq2VecEncoder.from_params(Params(params))


def test_the_shipped_evaluation_switches_are_still_accepted():
    """The 0.2 configs' switches, translated into the policies they chose."""
    parser = {"tracking_dim": 3, "predict_transitions": True}
    encoder = old_config(**parser, parse_at_test_time=True)
    assert isinstance(encoder.evaluation_policy, Greedy)
    encoder = old_config(**parser, soft_stack=True, soft_at_test_time=False)
    assert isinstance(encoder.training_policy, SoftStrengths)
    assert isinstance(encoder.evaluation_policy, Greedy)
    encoder = old_config(
        **parser, soft_stack=True, gumbel_straight_through=True, soft_at_test_time=False
    )
    assert isinstance(encoder.training_policy, StraightThroughGumbel)
    assert isinstance(encoder.evaluation_policy, Greedy)
