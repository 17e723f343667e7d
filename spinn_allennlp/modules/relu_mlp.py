from typing import List

from torch import nn


def relu_mlp(
    input_dim: int, num_layers: int, hidden_dim: int, dropout: float, batch_norm: bool
) -> nn.Sequential:
    """The SPINN paper's classifier MLP (§4): optional batch normalisation and dropout on the
    input, then `num_layers` ReLU layers (He initialisation, zero bias, as the paper's §4.1),
    each followed by optional batch normalisation and dropout. Shared by the sentence and
    pair classifiers; the layer order (and so the state-dict keys `_mlp.<i>.*` of archives)
    is the same as when each model built its own.

    The output size is `hidden_dim`, or `input_dim` when `num_layers` is 0.
    """
    layers: List[nn.Module] = [nn.BatchNorm1d(input_dim)] if batch_norm else []
    layers.append(nn.Dropout(dropout))
    features = input_dim
    for _ in range(num_layers):
        linear = nn.Linear(features, hidden_dim)
        nn.init.kaiming_normal_(linear.weight, nonlinearity="relu")
        nn.init.zeros_(linear.bias)
        layers += [linear, nn.ReLU()]
        if batch_norm:
            layers.append(nn.BatchNorm1d(hidden_dim))
        layers.append(nn.Dropout(dropout))
        features = hidden_dim
    return nn.Sequential(*layers)


def mlp_output_dim(input_dim: int, num_layers: int, hidden_dim: int) -> int:
    """The size of `relu_mlp(input_dim, num_layers, hidden_dim, ...)`'s output."""
    return hidden_dim if num_layers > 0 else input_dim
