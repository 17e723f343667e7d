"""What a tree encoder says about word vectors it cannot take, and settings out of range: our
messages, naming the remedy, instead of torch's ("mat1 and mat2 must have the same dtype",
"dropout probability has to be between 0 and 1")."""

import pytest
import torch
from allennlp.common import Params
from allennlp.modules import Seq2VecEncoder

from spinn_allennlp.modules import ChildSumTreeLSTMEncoder, SpinnEncoder
from spinn_allennlp.modules.encoder_settings import TrackerSettings
from spinn_core.spinn import Spinn

ENCODERS = {
    "spinn": lambda: SpinnEncoder(input_dim=4, hidden_dim=3),
    "spinn_pi": lambda: SpinnEncoder(input_dim=4, hidden_dim=3, tracker=TrackerSettings(2)),
    "child_sum": lambda: ChildSumTreeLSTMEncoder(input_dim=4, hidden_dim=3),
}
MASK = torch.tensor([[True, True, True], [True, True, False]])


@pytest.mark.parametrize("name", list(ENCODERS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_word_vectors_of_another_dtype_are_refused_with_the_remedy(name, dtype):
    encoder = ENCODERS[name]()
    inputs = torch.randn(2, 3, 4).to(dtype)
    with pytest.raises(ValueError) as error:
        encoder(inputs, MASK)
    message = str(error.value)
    assert message.startswith(f"{type(encoder).__name__} got word vectors of dtype {dtype}")
    assert "parameters are torch.float32" in message and "autocast" in message
    # Each remedy the message names works.
    assert encoder(inputs.to(torch.float32), MASK).dtype == torch.float32
    assert encoder.to(dtype)(inputs, MASK).dtype == dtype


@pytest.mark.parametrize("name", list(ENCODERS))
def test_token_ids_instead_of_vectors_are_refused(name):
    encoder = ENCODERS[name]()
    with pytest.raises(ValueError, match="dtype torch.int64: it takes floating-point vectors"):
        encoder(torch.ones(2, 3, 4, dtype=torch.long), MASK)


def test_half_precision_vectors_under_autocast_are_taken():
    """Under autocast a model's earlier layers hand on bf16 vectors; autocast casts both sides
    of each product, so the encoder runs as it would on float32 vectors."""
    encoder = SpinnEncoder(input_dim=4, hidden_dim=3)
    inputs = torch.randn(2, 3, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        output = encoder(inputs.to(torch.bfloat16), MASK)
    assert output.shape == (2, 3) and torch.isfinite(output.float()).all()


@pytest.mark.parametrize("rate", [1.5, 1.0, -0.1])
def test_projection_dropout_outside_a_drop_rate_is_refused(rate):
    params = {"type": "spinn", "input_dim": 4, "hidden_dim": 3, "projection_dropout": rate}
    with pytest.raises(ValueError, match=r"projection.dropout is a drop rate in \[0, 1\), got "):
        Seq2VecEncoder.from_params(Params(dict(params)))
    with pytest.raises(ValueError, match="keep rates: drop = 1 - keep"):
        Spinn(input_dim=4, hidden_dim=3, projection_dropout=rate)
    params["projection_dropout"] = 0.9
    assert isinstance(Seq2VecEncoder.from_params(Params(dict(params))), SpinnEncoder)


@pytest.mark.parametrize("name", ["spinn", "spinn_pi"])
def test_transitions_of_the_wrong_shape_are_a_value_error_naming_the_shape(name):
    """Transitions for 2 sentences of a batch of 3, or 1-D, through `forward`: our message,
    not torch's "The size of tensor a (2) must match" or "Dimension out of range" (the
    default-tree code read them before anything checked them)."""
    encoder = ENCODERS[name]()
    inputs = torch.randn(3, 3, 4)
    mask = torch.ones(3, 3, dtype=torch.bool)
    good = torch.tensor([[0, 0, 1, 0, 1]] * 3)
    for bad in (good[:2], good[0]):
        with pytest.raises(ValueError, match=r"transitions must have shape \(batch, steps\)"):
            encoder(inputs, mask, bad)
    assert encoder(inputs, mask, good).shape == (3, 3)


def test_the_non_finite_input_message_is_a_whole_sentence():
    inputs = torch.randn(2, 3, 4)
    inputs[1, 2, 0] = float("nan")
    inputs[0, 0, 1] = float("inf")
    with pytest.raises(ValueError) as error:
        Spinn(4, 3)(inputs, torch.ones(2, 3, dtype=torch.bool))
    assert str(error.value).endswith("; 2 real word(s) of the batch are not finite")
