from typing import List, Optional, Tuple

import torch
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.matrix_attention import MatrixAttention
from allennlp.nn import InitializerApplicator

from spinn_allennlp.pair_classification.models.enhanced_inference import (
    Encoding,
    EnhancedInferenceModel,
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

    def _encode_input(
        self, embedded: torch.Tensor, mask: torch.Tensor, transitions: Optional[torch.Tensor]
    ) -> Encoding:
        # Shape: (batch_size, num_words, encoder_dim)
        return self._encoder(embedded, mask), mask, None

    def _compose(
        self, projected: torch.Tensor, encoding: Encoding
    ) -> Tuple[torch.Tensor, torch.Tensor, List[torch.Tensor]]:
        mask = encoding[1]
        # Shape: (batch_size, num_words, inference_dim)
        return self._inference_encoder(projected, mask), mask, []
