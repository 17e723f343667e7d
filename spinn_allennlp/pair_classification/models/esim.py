from typing import List, Optional, Tuple

import torch
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.matrix_attention import MatrixAttention
from allennlp.nn import InitializerApplicator

from spinn_allennlp.core.batching import concat_padded
from spinn_allennlp.pair_classification.models.enhanced_inference import (
    Composition,
    Encoding,
    EnhancedInferenceModel,
    Side,
)


@Model.register("esim_nli")
class EsimNli(EnhancedInferenceModel):
    """ESIM, the Enhanced Sequential Inference Model of Chen et al. (2017): a BiLSTM input
    encoding of each sentence's words (eq. 1-2), soft alignment and enhancement (eq. 11-15),
    the projection `F`, a BiLSTM inference composition (§3.3), average and max pooling over the
    words (eq. 18-20) and an MLP. Built from AllenNLP's `Seq2SeqEncoder`, `MatrixAttention` and
    `FeedForward`; see `EnhancedInferenceModel` for the shared parts. Gold transitions, if the
    reader gives them, are ignored: ESIM reads words in order.

    Registered as a `Model` with name "esim_nli".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2SeqEncoder`
        The input encoding (a BiLSTM in the paper).
    projection_feedforward : `FeedForward`
        `F`, from 4 x `encoder`'s output size to `inference_encoder`'s input size.
    inference_encoder : `Seq2SeqEncoder`
        The inference composition (a BiLSTM in the paper).
    output_feedforward : `FeedForward`
        The MLP on the pooled vector (input 4 x `inference_encoder`'s output size).
    similarity : `MatrixAttention`, optional (default = `DotProductMatrixAttention()`)
    dropout : `float`, optional (default = `0.5`)
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional (default = `None`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        projection_feedforward: FeedForward,
        inference_encoder: Seq2SeqEncoder,
        output_feedforward: FeedForward,
        similarity: Optional[MatrixAttention] = None,
        dropout: float = 0.5,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(
            vocab,
            text_field_embedder,
            projection_feedforward,
            output_feedforward,
            similarity=similarity,
            dropout=dropout,
            label_namespace=label_namespace,
            initializer=initializer,
            **kwargs,
        )
        self._encoder = encoder
        self._inference_encoder = inference_encoder
        self._check_dimensions(
            encoder.get_input_dim(),
            encoder.get_output_dim(),
            inference_encoder.get_input_dim(),
            4 * inference_encoder.get_output_dim(),
        )
        self._initialize()

    def _encode_inputs(self, sides: List[Side]) -> List[Encoding]:
        # Premises and hypotheses through the BiLSTM in one call: max(lengths) steps, not the
        # sum (padding rows of the shorter side are masked, so each side is as if alone).
        states = _one_call(self._encoder, [(embedded, mask) for embedded, mask, _ in sides])
        # Shape: (batch_size, num_words, encoder_dim) each.
        return [(side_states, mask, None) for side_states, (_, mask, _) in zip(states, sides)]

    def _compose(
        self, projected: List[torch.Tensor], encodings: List[Encoding]
    ) -> List[Composition]:
        masks = [mask for _, mask, _ in encodings]
        states = _one_call(self._inference_encoder, list(zip(projected, masks)))
        # Shape: (batch_size, num_words, inference_dim) each.
        return [(side_states, mask, []) for side_states, mask in zip(states, masks)]


def _one_call(
    encoder: Seq2SeqEncoder, batches: List[Tuple[torch.Tensor, torch.Tensor]]
) -> List[torch.Tensor]:
    """`encoder` over several (inputs, mask) batches stacked into one (padded to a common
    width), its output cut back into each batch's rows and width."""
    inputs = concat_padded([inputs for inputs, _ in batches], 0.0)
    mask = concat_padded([mask for _, mask in batches], False)
    outputs = encoder(inputs, mask).split([inputs.size(0) for inputs, _ in batches])
    return [output[:, : inputs.size(1)] for output, (inputs, _) in zip(outputs, batches)]
