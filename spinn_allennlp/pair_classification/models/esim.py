from typing import List

import torch
from allennlp.models import Model
from allennlp.modules import Seq2SeqEncoder

from spinn_allennlp.modules.sentence_batches import stack_batches
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

    encoder : `Seq2SeqEncoder`
        The input encoding (a BiLSTM in the paper).
    inference_encoder : `Seq2SeqEncoder`
        The inference composition (a BiLSTM in the paper); `output_feedforward` takes 4 x its
        output size.
    **kwargs
        The other parameters of `EnhancedInferenceModel`.
    """

    _encoder: Seq2SeqEncoder
    _inference_encoder: Seq2SeqEncoder

    def __init__(
        self, encoder: Seq2SeqEncoder, inference_encoder: Seq2SeqEncoder, **kwargs
    ) -> None:
        super().__init__(encoder=encoder, inference_encoder=inference_encoder, **kwargs)

    def _encode_inputs(self, sides: List[Side]) -> List[Encoding]:
        # Premises and hypotheses through the BiLSTM in one call: max(lengths) steps, not the
        # sum (padding rows of the shorter side are masked, so each side is as if alone).
        stacked = stack_batches([(embedded, mask, None) for embedded, mask, _ in sides])
        states = stacked.split_positions(self._encoder(stacked.inputs, stacked.mask))
        # Shape: (batch_size, num_words, encoder_dim) each.
        return [(side_states, mask, None) for side_states, (_, mask, _) in zip(states, sides)]

    def _compose(
        self, projected: List[torch.Tensor], encodings: List[Encoding]
    ) -> List[Composition]:
        masks = [mask for _, mask, _ in encodings]
        stacked = stack_batches([(side, mask, None) for side, mask in zip(projected, masks)])
        states = stacked.split_positions(self._inference_encoder(stacked.inputs, stacked.mask))
        # Shape: (batch_size, num_words, inference_dim) each.
        return [(side_states, mask, []) for side_states, mask in zip(states, masks)]
