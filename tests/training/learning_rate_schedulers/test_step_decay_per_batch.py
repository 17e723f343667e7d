import pytest
import torch
from allennlp.common import Params
from allennlp.training.learning_rate_schedulers import LearningRateScheduler

from spinn_allennlp.training import StepDecayPerBatch


def make(**params):
    optimizer = torch.optim.RMSprop([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = LearningRateScheduler.from_params(
        Params({"type": "step_decay_per_batch", **params}), optimizer=optimizer
    )
    return optimizer, scheduler


def test_decays_every_n_batches_across_epochs():
    optimizer, scheduler = make(decay_steps=3, gamma=0.5)
    assert isinstance(scheduler, StepDecayPerBatch)
    seen = []
    for batch in range(1, 8):
        scheduler.step_batch(batch)
        if batch == 4:
            scheduler.step()  # an epoch ends: the schedule doesn't care
        seen.append(optimizer.param_groups[0]["lr"])
    assert seen == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025])


def test_counts_batches_itself_without_a_total():
    optimizer, scheduler = make(decay_steps=2, gamma=0.75)
    for _ in range(5):
        scheduler.step_batch()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1 * 0.75**2)


def test_rejects_non_positive_decay_steps():
    with pytest.raises(ValueError, match="decay_steps"):
        make(decay_steps=0)
