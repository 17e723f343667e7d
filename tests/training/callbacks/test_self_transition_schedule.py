"""The Model 2 schedule from teacher forcing to the parser's own predictions."""

from types import SimpleNamespace

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.modules import SpinnEncoder
from spinn_allennlp.modules.encoder_settings import TrackerSettings
from spinn_allennlp.training.callbacks import SelfTransitionSchedule
from spinn_core.policies import Given


def schedule(**options):
    params = Params({"type": "self_transition_schedule", **options})
    return TrainerCallback.from_params(params, serialization_dir="unused")


def test_holds_then_ramps_linearly_then_stays():
    callback = schedule(start=0.0, end=1.0, hold_batches=10, ramp_batches=20)
    assert isinstance(callback, SelfTransitionSchedule)
    values = [callback.probability(n) for n in (0, 9, 10, 15, 20, 30, 100)]
    assert values == pytest.approx([0.0, 0.0, 0.0, 0.25, 0.5, 1.0, 1.0])
    assert schedule(start=1.0, end=1.0, ramp_batches=0).probability(0) == 1.0


def test_sets_the_encoders_probability_batch_by_batch_and_resumes():
    encoder = SpinnEncoder(4, 3, tracker=TrackerSettings(2, predict_transitions=True))
    trainer = SimpleNamespace(model=SimpleNamespace(modules=lambda: [encoder]))
    callback = schedule(start=0.2, end=0.6, ramp_batches=4)
    callback.on_start(trainer)
    assert encoder.training_policy.self_transition_prob == pytest.approx(0.2)
    metrics = {}
    for _ in range(2):
        callback.on_batch(trainer, [], [], metrics, 0, 0, is_training=True)
    callback.on_batch(trainer, [], [], metrics, 0, 0, is_training=False)  # validation: no step
    assert encoder.training_policy.self_transition_prob == pytest.approx(0.4)
    assert metrics["self_transition_prob"] == pytest.approx(0.4)

    resumed = schedule(start=0.2, end=0.6, ramp_batches=4)
    resumed.load_state_dict(callback.state_dict())
    resumed.on_start(trainer)
    assert encoder.training_policy.self_transition_prob == pytest.approx(0.4)


def test_teacher_forcing_while_the_probability_is_zero_and_other_policies_refused():
    """At 0 the encoder follows the given trees themselves (Given: planned ahead, no random
    draws), as Model 1; a training policy the schedule would replace is an error."""
    encoder = SpinnEncoder(4, 3, tracker=TrackerSettings(2, predict_transitions=True))
    trainer = SimpleNamespace(model=SimpleNamespace(modules=lambda: [encoder]))
    schedule(start=0.0, end=1.0, hold_batches=2).on_start(trainer)
    assert isinstance(encoder.training_policy, Given)
    soft = SpinnEncoder(
        4,
        3,
        tracker=TrackerSettings(2, predict_transitions=True),
        training_policy={"type": "soft"},
    )
    trainer = SimpleNamespace(model=SimpleNamespace(modules=lambda: [soft]))
    with pytest.raises(ConfigurationError, match='"given" or "mixed"'):
        schedule().on_start(trainer)


def test_refuses_models_without_a_parser_and_bad_values():
    trainer = SimpleNamespace(model=SimpleNamespace(modules=lambda: [SpinnEncoder(4, 3)]))
    with pytest.raises(ConfigurationError, match="a parser"):
        schedule().on_start(trainer)
    with pytest.raises(ConfigurationError):
        schedule(end=1.5)
