import pytest
import torch

from spinn_allennlp.training.metrics import MeanSquaredError


def test_mean_over_every_value_seen():
    metric = MeanSquaredError()
    metric(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]))
    metric(torch.tensor([3.0, 0.0]), torch.tensor([2.0, 5.0]), mask=torch.tensor([True, False]))
    assert metric.get_metric(reset=True) == pytest.approx((0 + 4 + 1) / 3)
    assert metric.get_metric() == 0.0
