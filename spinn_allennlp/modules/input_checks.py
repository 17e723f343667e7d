"""Where word vectors meet a sentence encoder: the checks that say which setting to change when
their sizes differ (at a model's construction, `check_embedder_feeds_encoder`, and at an
encoder's first batch, `word_mask`, for models that never compare them, such as AllenNLP's
`basic_classifier`) or their dtype is not the encoder's (`check_word_vector_dtype`), and
AllenNLP's `mask=None` (`word_mask`)."""

from typing import Optional

import torch
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.modules.seq2vec_encoders import (
    BagOfEmbeddingsEncoder,
    CnnEncoder,
    CnnHighwayEncoder,
    PytorchSeq2VecWrapper,
)

from spinn_allennlp.modules.padded_lstm import PaddedLstmSeq2VecEncoder
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules


def input_size_setting(encoder: Seq2VecEncoder) -> str:
    """The name of the setting that gives `encoder` its input size, as a config spells it."""
    if isinstance(encoder, (PytorchSeq2VecWrapper, PaddedLstmSeq2VecEncoder)):  # "lstm", ...
        return "input_size"
    if isinstance(encoder, (BagOfEmbeddingsEncoder, CnnEncoder, CnnHighwayEncoder)):
        return "embedding_dim"
    return "input_dim"  # ours ("spinn", "child_sum_tree_lstm") and most others


def check_embedder_feeds_encoder(
    embedder: TextFieldEmbedder, encoder: Seq2VecEncoder, name: str = "encoder"
) -> None:
    """Raises `ConfigurationError` naming the setting to change unless `embedder`'s output size
    is `encoder`'s input size (`name`: the model's parameter that holds the encoder)."""
    with configuration_errors():
        rules.check_embedder_feeds_encoder(
            embedder.get_output_dim(), encoder.get_input_dim(), name, input_size_setting(encoder)
        )


def word_mask(
    encoder: Seq2VecEncoder, inputs: torch.Tensor, mask: Optional[torch.Tensor]
) -> torch.Tensor:
    """The mask an encoder's `forward` got, or, for `None`, every position a word (as
    AllenNLP's own `Seq2VecEncoder`s read it); raises `ConfigurationError` naming the setting to
    change when the word vectors' size is not the encoder's input size."""
    if inputs.dim() == 3:
        with configuration_errors():
            rules.check_word_vector_size(
                type(encoder).__name__,
                inputs.size(-1),
                encoder.get_input_dim(),
                input_size_setting(encoder),
            )
    check_word_vector_dtype(encoder, inputs)
    if mask is None:
        return torch.ones(inputs.shape[:-1], dtype=torch.bool, device=inputs.device)
    return mask


def check_word_vector_dtype(encoder: Seq2VecEncoder, inputs: torch.Tensor) -> None:
    """Raises `ValueError` saying what to do when the word vectors are not floating point, or
    not of the encoder's parameters' dtype outside autocast (torch's own message, "mat1 and
    mat2 must have the same dtype", names neither the encoder nor a remedy)."""
    name = type(encoder).__name__
    if not inputs.is_floating_point():
        raise ValueError(
            f"{name} got word vectors of dtype {inputs.dtype}: it takes floating-point vectors "
            "(token ids go through an embedder first)"
        )
    parameter = next(encoder.parameters(), None)
    if parameter is None or inputs.dtype == parameter.dtype:
        return
    if torch.is_autocast_enabled(inputs.device.type):
        return  # autocast casts both sides of each product
    raise ValueError(
        f"{name} got word vectors of dtype {inputs.dtype}, but its parameters are "
        f"{parameter.dtype}: convert one to the other (inputs.to({parameter.dtype}) or "
        f"encoder.to({inputs.dtype})) or run under torch.autocast; for bf16 inside the "
        'encoder, set its mixed_precision to "bf16"'
    )
