"""The plugin's `reduce_on_plateau`, registered in place of AllenNLP's (which passes `verbose=`
to a torch that rejects it)."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from allennlp.training.learning_rate_schedulers.pytorch_lr_schedulers import (
    ReduceOnPlateauLearningRateScheduler,
)

from spinn_allennlp.training import ReduceOnPlateau

# What allennlp-models' pair-classification configs (ESIM, BiMPM, decomposable attention) give.
ALLENNLP_MODELS = {"type": "reduce_on_plateau", "factor": 0.5, "mode": "max", "patience": 0}


def make(lr=0.1, **params):
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=lr)
    scheduler = LearningRateScheduler.from_params(Params(params), optimizer=optimizer)
    return optimizer, scheduler


def lr_of(optimizer):
    return optimizer.param_groups[0]["lr"]


def test_allennlps_own_scheduler_fails_on_this_torch():
    """Why the plugin registers its own: AllenNLP's passes `verbose`, which torch removed."""
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    with pytest.raises(TypeError, match="verbose"):
        ReduceOnPlateauLearningRateScheduler(optimizer)


def test_the_name_gives_the_plugins_scheduler_with_allennlp_models_keys():
    _, scheduler = make(**ALLENNLP_MODELS)
    assert isinstance(scheduler, ReduceOnPlateau)


def test_every_key_of_allennlps_scheduler_loads_verbose_included():
    optimizer, scheduler = make(
        lr=1.0,
        type="reduce_on_plateau",
        mode="min",
        factor=0.2,
        patience=1,
        verbose=True,
        threshold_mode="abs",
        threshold=0.5,
        cooldown=1,
        min_lr=0.1,
        eps=1e-10,
    )
    torch_scheduler = scheduler.lr_scheduler
    assert (torch_scheduler.mode, torch_scheduler.factor, torch_scheduler.patience) == (
        "min",
        0.2,
        1,
    )
    assert (torch_scheduler.threshold_mode, torch_scheduler.threshold) == ("abs", 0.5)
    assert (torch_scheduler.cooldown, torch_scheduler.min_lrs, torch_scheduler.eps) == (
        1,
        [0.1],
        1e-10,
    )


def test_halves_the_rate_when_accuracy_stops_improving():
    """allennlp-models' setting: mode max (validation_metric "+accuracy"), patience 0, factor
    0.5: every epoch without a new best halves the learning rate."""
    optimizer, scheduler = make(lr=0.4, **ALLENNLP_MODELS)
    seen = []
    for accuracy in [0.50, 0.60, 0.60, 0.55, 0.70, 0.65]:
        scheduler.step(accuracy)
        seen.append(lr_of(optimizer))
    assert seen == pytest.approx([0.4, 0.4, 0.2, 0.1, 0.1, 0.05])


def test_min_mode_and_patience():
    optimizer, scheduler = make(lr=1.0, type="reduce_on_plateau", factor=0.1, patience=2)
    seen = []
    for loss in [3.0, 2.0, 2.5, 2.5, 2.5, 1.0]:
        scheduler.step(loss)
        seen.append(lr_of(optimizer))
    assert seen == pytest.approx([1.0, 1.0, 1.0, 1.0, 0.1, 0.1])


def test_state_round_trip_for_recover():
    """`allennlp train --recover` restores the scheduler from its state: the best value and the
    epochs without improvement go on where they were."""
    optimizer, scheduler = make(lr=0.4, **{**ALLENNLP_MODELS, "patience": 1})
    for accuracy in [0.5, 0.7, 0.6]:  # one bad epoch: one more halves the rate
        scheduler.step(accuracy)
    state = scheduler.state_dict()

    resumed_optimizer, resumed = make(lr=0.4, **{**ALLENNLP_MODELS, "patience": 1})
    resumed.load_state_dict(state)
    resumed_optimizer.load_state_dict(optimizer.state_dict())
    assert resumed.lr_scheduler.best == 0.7 and resumed.lr_scheduler.num_bad_epochs == 1
    resumed.step(0.65)
    scheduler.step(0.65)
    assert lr_of(resumed_optimizer) == lr_of(optimizer) == pytest.approx(0.2)


def test_a_mode_that_is_neither_min_nor_max_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match='mode must be "min" or "max"'):
        make(type="reduce_on_plateau", mode="maximum")


def test_without_a_validation_metric_it_says_what_is_missing():
    _, scheduler = make(**ALLENNLP_MODELS)
    with pytest.raises(ConfigurationError, match="validation_data_path"):
        scheduler.step(None)
