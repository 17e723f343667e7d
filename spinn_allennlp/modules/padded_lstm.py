"""`"padded_lstm"`: AllenNLP's `"lstm"` seq2vec encoder, computed over the padded batch.

AllenNLP's `lstm` packs every batch (`pack_padded_sequence`) so that each row's final state is
read at its own last word. On a CPU, PyTorch's backward through a packed LSTM is several times
slower than through the same LSTM over the padded batch (a ListOps training step takes 0.31 of
the time: `benchmarks/results/padded_lstm/`), and a forward LSTM needs no packing: with the real
words first, the padding after them changes no real word's state, so a row's final state is its
output at its last word. The backward direction of a bidirectional LSTM reads each row's words
reversed in place (the padding stays at the end), and its outputs are put back in word order
before the next layer reads them.

The parameters are the `lstm` encoder's under the same names (an `nn.LSTM` held as `_module` in
both), so a model's weights load into either; the outputs are the same up to float rounding
(`tests/modules/test_padded_lstm.py`, to 1e-12 in float64).
"""

from typing import List, Optional

import torch
from allennlp.modules import Seq2VecEncoder


@Seq2VecEncoder.register("padded_lstm")
class PaddedLstmSeq2VecEncoder(Seq2VecEncoder):
    """The last layer's final state of an LSTM over each row's words (both directions'
    concatenated, forward first, when bidirectional), as AllenNLP's `"lstm"` gives it, for
    masks with each row's words first (AllenNLP's padding); an empty row gives zeros (where
    AllenNLP's `lstm` fails on a batch of empty rows: "Cannot pack empty tensors").

    # Parameters

    The `"lstm"` encoder's: `input_size`, `hidden_size`, `num_layers` (default 1), `bias`
    (default `True`), `dropout` (between layers, in training; default 0.0), `bidirectional`
    (default `False`).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        dropout: float = 0.0,
        bidirectional: bool = False,
    ) -> None:
        super().__init__()
        self._module = torch.nn.LSTM(
            input_size=input_size,
            hidden_size=hidden_size,
            num_layers=num_layers,
            bias=bias,
            batch_first=True,
            dropout=dropout,
            bidirectional=bidirectional,
        )

    def get_input_dim(self) -> int:
        return self._module.input_size

    def get_output_dim(self) -> int:
        return self._module.hidden_size * (2 if self._module.bidirectional else 1)

    def forward(self, inputs: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        batch_size, num_words = inputs.shape[:2]
        if mask is None:
            mask = inputs.new_ones(batch_size, num_words, dtype=torch.bool)
        if bool((mask[:, 1:] & ~mask[:, :-1]).any()):
            raise ValueError(
                "padded_lstm reads each row's words first and its padding after them, but a "
                "row of the mask has a word after padding"
            )
        lengths = mask.sum(1)
        if num_words == 0:  # a batch of empty texts: no step to run
            return inputs.new_zeros(batch_size, self.get_output_dim())
        # Shape: (B, 1, 1): each row's last word (0 for an empty row, zeroed below).
        last = (lengths - 1).clamp(min=0).view(-1, 1, 1)
        if self._module.bidirectional:
            # Shape: (B, N, 2 * hidden_size); the forward half's final state is at the last word,
            # the backward half's at the first.
            outputs = self._bidirectional(inputs, lengths)
            hidden = self._module.hidden_size
            final = torch.cat([_at(outputs[..., :hidden], last), outputs[:, 0, hidden:]], -1)
        else:
            # Shape: (B, N, hidden_size).
            outputs = self._module(inputs)[0]
            final = _at(outputs, last)
        return final * (lengths > 0).unsqueeze(1).to(final.dtype)

    def _bidirectional(self, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Every layer's two directions, the backward one over each row's words reversed in
        place; returns the last layer's outputs in word order."""
        # Shape: (B, N, 1): position t of row b reads word lengths[b] - 1 - t while t is one of
        # its words, and stays where it is in the padding. Reversing twice is the identity.
        positions = torch.arange(inputs.size(1), device=inputs.device).unsqueeze(0)
        reversed_positions = torch.where(
            positions < lengths.unsqueeze(1), lengths.unsqueeze(1) - 1 - positions, positions
        ).unsqueeze(-1)
        layer_input = inputs
        for layer in range(self._module.num_layers):
            forward = self._direction(layer_input, layer, "")
            backward = _gather_rows(
                self._direction(_gather_rows(layer_input, reversed_positions), layer, "_reverse"),
                reversed_positions,
            )
            layer_input = torch.cat([forward, backward], dim=-1)
            if layer + 1 < self._module.num_layers and self._module.dropout:
                layer_input = torch.nn.functional.dropout(
                    layer_input, self._module.dropout, self.training
                )
        return layer_input

    def _direction(self, inputs: torch.Tensor, layer: int, suffix: str) -> torch.Tensor:
        """One layer's one direction, left to right over `inputs`, with that direction's
        weights of `_module`."""
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if self._module.bias else [])
        weights: List[torch.Tensor] = [
            getattr(self._module, f"{name}_l{layer}{suffix}") for name in names
        ]
        zeros = inputs.new_zeros(1, inputs.size(0), self._module.hidden_size)
        output, _, _ = torch.lstm(
            inputs,
            (zeros, zeros),
            weights,
            self._module.bias,
            1,  # num_layers
            0.0,  # dropout
            self.training,
            False,  # bidirectional
            True,  # batch_first
        )
        return output


def _gather_rows(values: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """`values` (B, N, D) with each row's positions reordered by `positions` (B, N, 1)."""
    return values.gather(1, positions.expand(-1, -1, values.size(-1)))


def _at(values: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """`values` (B, N, D) at one position per row (`position` (B, 1, 1)): (B, D)."""
    return values.gather(1, position.expand(-1, 1, values.size(-1))).squeeze(1)
