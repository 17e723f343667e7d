"""The parser temperature's annealing (the soft stack made to choose, straight-through
choices)."""

from types import SimpleNamespace

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.modules import SpinnEncoder
from spinn_allennlp.modules.encoder_settings import TrackerSettings
from spinn_allennlp.training.callbacks import ParserTemperatureSchedule


def schedule(**options):
    params = Params({"type": "parser_temperature_schedule", **options})
    return TrainerCallback.from_params(params, serialization_dir="unused")


def test_holds_then_falls_geometrically_then_stays():
    callback = schedule(start=1.0, end=0.01, hold_batches=10, ramp_batches=20)
    assert isinstance(callback, ParserTemperatureSchedule)
    values = [callback.temperature(n) for n in (0, 10, 20, 30, 100)]
    assert values == pytest.approx([1.0, 1.0, 0.1, 0.01, 0.01])


def test_anneals_the_soft_stack_of_the_encoder_and_resumes():
    torch.manual_seed(0)
    encoder = SpinnEncoder(
        4,
        3,
        tracker=TrackerSettings(2, predict_transitions=True),
        training_policy={"type": "soft"},
        evaluation_policy={"type": "soft"},
    )
    trainer = SimpleNamespace(model=SimpleNamespace(modules=lambda: [encoder]))
    callback = schedule(start=1.0, end=1e-3, ramp_batches=2)
    callback.on_start(trainer)
    inputs, mask = torch.randn(3, 5, 4), torch.ones(3, 5, dtype=torch.bool)
    warm = encoder.train().encode(inputs, mask).reduce_strengths
    metrics = {}
    for _ in range(2):
        callback.on_batch(trainer, [], [], metrics, 0, 0, is_training=True)
    assert encoder.training_policy.temperature == pytest.approx(1e-3)
    assert encoder.evaluation_policy.temperature == pytest.approx(1e-3)
    assert metrics["parser_temperature"] == pytest.approx(1e-3)
    cold = encoder.encode(inputs, mask).reduce_strengths
    # At temperature 1e-3 the strengths are all but 0 or 1; at 1, an untrained parser's are not.
    assert ((warm > 0.01) & (warm < 0.99)).any()
    assert (torch.minimum(cold, 1 - cold) < 1e-3).all()

    resumed = schedule(start=1.0, end=1e-3, ramp_batches=2)
    resumed.load_state_dict(callback.state_dict())
    encoder.training_policy.temperature = 1.0
    resumed.on_start(trainer)
    assert encoder.training_policy.temperature == pytest.approx(1e-3)


def test_refuses_models_without_a_parser_and_bad_values():
    trainer = SimpleNamespace(model=SimpleNamespace(modules=lambda: [SpinnEncoder(4, 3)]))
    with pytest.raises(ConfigurationError, match="a parser"):
        schedule().on_start(trainer)
    greedy = SpinnEncoder(4, 3, tracker=TrackerSettings(2, predict_transitions=True))
    trainer = SimpleNamespace(model=SimpleNamespace(modules=lambda: [greedy]))
    with pytest.raises(ConfigurationError, match="a temperature"):
        schedule().on_start(trainer)  # no policy of its reads a temperature
    with pytest.raises(ConfigurationError, match="positive"):
        schedule(end=0.0)
