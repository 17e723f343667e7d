import torch
from torch import nn

from spinn_allennlp.modules.relu_mlp import mlp_output_dim, relu_mlp


def test_layer_order_is_the_archived_models_order():
    # Archives key the MLP's weights by position (`_mlp.<i>.*`): the order must not move.
    mlp = relu_mlp(8, 2, 5, dropout=0.1, batch_norm=True)
    kinds = [type(layer) for layer in mlp]
    assert kinds == [
        nn.BatchNorm1d, nn.Dropout,
        nn.Linear, nn.ReLU, nn.BatchNorm1d, nn.Dropout,
        nn.Linear, nn.ReLU, nn.BatchNorm1d, nn.Dropout,
    ]  # fmt: skip
    assert [kind for kind in map(type, relu_mlp(8, 1, 5, 0.0, False))] == [
        nn.Dropout, nn.Linear, nn.ReLU, nn.Dropout,
    ]  # fmt: skip


def test_relu_layers_start_he_initialised_with_zero_bias():
    torch.manual_seed(0)
    mlp = relu_mlp(400, 1, 300, dropout=0.0, batch_norm=False)
    linear = mlp[1]
    assert torch.count_nonzero(linear.bias) == 0
    # He (fan-in) initialisation: std = sqrt(2 / 400) ~ 0.0707; 120,000 draws pin it to ~0.3 %.
    assert abs(float(linear.weight.std()) - (2 / 400) ** 0.5) < 0.002


def test_output_size():
    for layers, expected in ((0, 8), (1, 5), (3, 5)):
        mlp = relu_mlp(8, layers, 5, dropout=0.0, batch_norm=True).eval()
        assert mlp(torch.randn(4, 8)).shape == (4, expected)
        assert mlp_output_dim(8, layers, 5) == expected
