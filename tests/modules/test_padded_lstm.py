"""`padded_lstm`: AllenNLP's `lstm` seq2vec encoder over the padded batch — the same parameters
under the same names, the same outputs and gradients (float64: rounding only), clear errors."""

import pytest
import torch
from allennlp.common import Params
from allennlp.modules import Seq2VecEncoder

from spinn_allennlp.modules import PaddedLstmSeq2VecEncoder

SETTINGS = [
    {},
    {"num_layers": 2},
    {"bidirectional": True},
    {"num_layers": 2, "bidirectional": True},
    {"num_layers": 3, "bidirectional": True, "bias": False},
]


def both(settings, seed=0):
    """AllenNLP's `lstm` and `padded_lstm` built from one config, in float64, with the same
    weights (the same initialisation from the same seed: no copying needed)."""
    params = {"input_size": 5, "hidden_size": 4, **settings}
    torch.manual_seed(seed)
    packed = Seq2VecEncoder.from_params(Params({"type": "lstm", **params})).double()
    torch.manual_seed(seed)
    padded = Seq2VecEncoder.from_params(Params({"type": "padded_lstm", **params})).double()
    return packed, padded


def batch():
    torch.manual_seed(1)
    inputs = torch.randn(4, 6, 5, dtype=torch.float64)
    lengths = torch.tensor([6, 3, 1, 0])  # a full row, two shorter, an empty one
    mask = torch.arange(6).unsqueeze(0) < lengths.unsqueeze(1)
    # Padding that is not zero: the padded encoder must not read it.
    return inputs, mask


@pytest.mark.parametrize("settings", SETTINGS)
def test_same_parameters_outputs_and_gradients_as_allennlps_lstm(settings):
    packed, padded = both(settings)
    assert isinstance(padded, PaddedLstmSeq2VecEncoder)
    assert padded.state_dict().keys() == packed.state_dict().keys()
    for name, value in packed.state_dict().items():
        assert torch.equal(value, padded.state_dict()[name]), name
    assert (padded.get_input_dim(), padded.get_output_dim()) == (
        packed.get_input_dim(),
        packed.get_output_dim(),
    )
    inputs, mask = batch()
    results = []
    for encoder in (packed, padded):
        leaf = inputs.clone().requires_grad_()
        output = encoder(leaf, mask)
        # A loss that weighs every output differently.
        (output * torch.linspace(-1, 1, output.numel()).view_as(output)).sum().backward()
        grads = {name: p.grad for name, p in encoder.named_parameters()}
        results.append((output, leaf.grad, grads))
    (out_a, in_a, grads_a), (out_b, in_b, grads_b) = results
    torch.testing.assert_close(out_b, out_a, rtol=1e-12, atol=1e-12)
    assert torch.equal(out_b[3], torch.zeros_like(out_b[3]))  # the empty row
    torch.testing.assert_close(in_b, in_a, rtol=1e-12, atol=1e-12)
    assert torch.equal(in_b[1, 3:], torch.zeros_like(in_b[1, 3:]))  # nothing read in padding
    for name in grads_a:
        torch.testing.assert_close(grads_b[name], grads_a[name], rtol=1e-12, atol=1e-12)


def test_weights_of_an_lstm_model_load_into_the_padded_one():
    packed, _ = both({"bidirectional": True}, seed=3)
    _, padded = both({"bidirectional": True}, seed=4)
    padded.load_state_dict(packed.state_dict())
    inputs, mask = batch()
    torch.testing.assert_close(padded(inputs, mask), packed(inputs, mask), rtol=1e-12, atol=1e-12)


def test_without_a_mask_every_position_is_a_word():
    packed, padded = both({"bidirectional": True})
    inputs, _ = batch()
    full = torch.ones(inputs.shape[:2], dtype=torch.bool)
    torch.testing.assert_close(padded(inputs), packed(inputs, full), rtol=1e-12, atol=1e-12)


def test_dropout_between_layers_only_in_training():
    _, padded = both({"num_layers": 2, "bidirectional": True, "dropout": 0.5})
    inputs, mask = batch()
    padded.eval()
    assert torch.equal(padded(inputs, mask), padded(inputs, mask))
    padded.train()
    torch.manual_seed(0)
    first = padded(inputs, mask)
    torch.manual_seed(1)
    assert not torch.equal(first, padded(inputs, mask))


def test_a_word_after_padding_is_an_error():
    _, padded = both({})
    inputs, mask = batch()
    mask[1, 5] = True
    with pytest.raises(ValueError, match="a word after padding"):
        padded(inputs, mask)


def test_a_batch_of_empty_rows_gives_zeros():
    _, padded = both({"bidirectional": True})
    for num_words in (1, 0):
        inputs = torch.randn(2, num_words, 5, dtype=torch.float64)
        output = padded(inputs, torch.zeros(2, num_words, dtype=torch.bool))
        assert torch.equal(output, torch.zeros(2, 8, dtype=torch.float64))
