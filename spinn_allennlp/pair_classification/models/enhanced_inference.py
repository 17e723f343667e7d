"""What ESIM and the syntactic tree-LSTM inference model share (Chen et al. 2017, §3): their
construction, soft alignment of premise and hypothesis states, enhancement, projection, pooling
and the MLP. The two differ in what the states are (words in context, or tree nodes) and how
they are composed."""

from typing import Any, Dict, List, Optional, Tuple, Union, cast

import torch
from allennlp.common.checks import check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.matrix_attention import DotProductMatrixAttention, MatrixAttention
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import CategoricalAccuracy
from torch import nn

from spinn_allennlp.modules.sentence_batches import SentenceBatch
from spinn_allennlp.modules.tree_encoder import given_trees
from spinn_allennlp.modules.tree_node_encoder import TreeNodeEncoder
from spinn_allennlp.pair_classification.models.readable_output import add_labels

# One side's embedded words (batch_size, num_words, dim), mask and transitions (or None).
Side = SentenceBatch
# Input encoding of one side: its states (batch_size, length, dim), their mask
# (batch_size, length) and whatever the composition layer needs from it (e.g. the trees).
Encoding = Tuple[torch.Tensor, torch.Tensor, Any]
# Inference composition of one side: states, mask, extra (batch_size, dim) vectors to pool.
Composition = Tuple[torch.Tensor, torch.Tensor, List[torch.Tensor]]


class EnhancedInferenceModel(Model):
    """The architecture of Chen et al. (2017), with the input encoding and the inference
    composition left to subclasses (`_encode_inputs`, `_compose`).

    For premise states `a` and hypothesis states `b` (words or tree nodes):
    similarity `e_ij = a_i . b_j` (eq. 11, or any `MatrixAttention`), soft alignment `ã`, `b̃`
    (eq. 12-13, over real positions only), enhancement `m = [a; ã; a - ã; a * ã]` (eq. 14-15),
    the projection `F` (a ReLU feedforward layer, §3.3), the composition layer, average and max
    pooling over real positions (eq. 18-20, plus any extra vectors the composition adds, such
    as tree roots), then an MLP (a tanh hidden layer) and a linear layer to the label logits.
    Dropout (a DROP rate) on the embedded words, on `m`, and on the pooled vector (the MLP's
    `FeedForward` has its own); the paper applies 0.5 "to all feedforward connections".

    A subclass says which kinds of `encoder` and `inference_encoder` it takes (the type of
    those two parameters in its constructor, which takes everything else as here) and how many
    vectors of the inference encoder's size it pools (`pooled_vectors`); the sizes of the
    parts are checked here.

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    projection_feedforward : `FeedForward`
        `F`: from 4 x `encoder`'s output size to `inference_encoder`'s input size.
    output_feedforward : `FeedForward`
        The MLP on the pooled vector (input `pooled_vectors` x `inference_encoder`'s output
        size).
    similarity : `MatrixAttention`, optional (default = `DotProductMatrixAttention()`)
    dropout : `float`, optional (default = `0.5`)
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional (default = `None`)
    encoder : `Seq2SeqEncoder` or `TreeNodeEncoder`
        The input encoding.
    inference_encoder : `Seq2SeqEncoder` or `TreeNodeEncoder`
        The inference composition.
    """

    # Vectors of the inference encoder's size in the pooled vector: average and max of each
    # side (eq. 18-20), plus whatever else the composition adds.
    pooled_vectors = 4

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        projection_feedforward: FeedForward,
        output_feedforward: FeedForward,
        similarity: Optional[MatrixAttention] = None,
        dropout: float = 0.5,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        *,
        # Last: AllenNLP builds the parts in this order, and the order of their random
        # initialisations is what a seed reproduces.
        encoder: Union[Seq2SeqEncoder, TreeNodeEncoder],
        inference_encoder: Union[Seq2SeqEncoder, TreeNodeEncoder],
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._embedder = text_field_embedder
        self._similarity = similarity or DotProductMatrixAttention()
        self._projection_feedforward = projection_feedforward
        self._output_feedforward = output_feedforward
        self._dropout = nn.Dropout(dropout)
        self._label_namespace = label_namespace
        self._output_logit = nn.Linear(
            output_feedforward.get_output_dim(), vocab.get_vocab_size(label_namespace)
        )
        self._accuracy = CategoricalAccuracy()
        self._encoder = encoder
        self._inference_encoder = inference_encoder
        check_dimensions_match(
            text_field_embedder.get_output_dim(),
            encoder.get_input_dim(),
            "text field embedding dim",
            "encoder input dim",
        )
        check_dimensions_match(
            4 * encoder.get_output_dim(),
            projection_feedforward.get_input_dim(),
            "4 x encoder output dim",
            "projection feedforward input dim",
        )
        check_dimensions_match(
            projection_feedforward.get_output_dim(),
            inference_encoder.get_input_dim(),
            "projection feedforward output dim",
            "inference encoder input dim",
        )
        check_dimensions_match(
            self.pooled_vectors * inference_encoder.get_output_dim(),
            output_feedforward.get_input_dim(),
            "pooled vector dim",
            "output feedforward input dim",
        )
        if initializer is not None:
            initializer(self)

    def _encode_inputs(self, sides: List[Side]) -> List[Encoding]:
        """Input encoding (eq. 1-2 or 3) of each side: embedded words, shape (batch_size,
        num_words, embedding_dim), their mask (batch_size, num_words) and transitions.
        Subclasses encode both sides in one call of their encoder where they can."""
        raise NotImplementedError

    def _compose(
        self, projected: List[torch.Tensor], encodings: List[Encoding]
    ) -> List[Composition]:
        """Inference composition (§3.3) of each side's projected `F(m)`, shape (batch_size,
        length, dim), aligned with that side's encoding: the composed states, their mask and
        any (batch_size, dim) vectors to pool with them."""
        raise NotImplementedError

    def forward(
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        premise_transitions: Optional[torch.Tensor] = None,
        hypothesis_transitions: Optional[torch.Tensor] = None,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        sides: List[Side] = []
        for tokens, transitions in (
            (premise, premise_transitions),
            (hypothesis, hypothesis_transitions),
        ):
            # Shape: (batch_size, num_words, embedding_dim)
            embedded = self._dropout(self._embedder(tokens))
            # An empty transitions field on every line (no parses): no trees.
            sides.append((embedded, util.get_text_field_mask(tokens), given_trees(transitions)))
        encodings = self._encode_inputs(sides)
        (a, a_mask, _), (b, b_mask, _) = encodings

        # Shape: (batch_size, premise_length, hypothesis_length)
        similarity = self._similarity(a, b)
        # Shape: (batch_size, premise_length, dim): the hypothesis aligned to each a_i (eq. 12).
        a_tilde = util.weighted_sum(
            b, util.masked_softmax(similarity, _bool(b_mask.unsqueeze(1)), memory_efficient=True)
        )
        # Shape: (batch_size, hypothesis_length, dim) (eq. 13).
        b_tilde = util.weighted_sum(
            a,
            util.masked_softmax(
                similarity.transpose(1, 2), _bool(a_mask.unsqueeze(1)), memory_efficient=True
            ),
        )

        projected = []
        for states, aligned in ((a, a_tilde), (b, b_tilde)):
            # Shape: (batch_size, length, 4 * dim) (eq. 14-15).
            enhanced = torch.cat([states, aligned, states - aligned, states * aligned], dim=-1)
            projected.append(self._projection_feedforward(self._dropout(enhanced)))
        pooled: List[torch.Tensor] = []
        extras: List[torch.Tensor] = []
        for composed, mask, extra in self._compose(projected, encodings):
            # Shape: (batch_size, dim) each (eq. 18-19).
            pooled.append(util.masked_mean(composed, _bool(mask.unsqueeze(-1)), dim=1))
            pooled.append(util.masked_max(composed, _bool(mask.unsqueeze(-1)), dim=1))
            extras += extra
        # Shape: (batch_size, pooled_dim) (eq. 20, then the extra vectors).
        v = torch.cat(pooled + extras, dim=-1)
        # Shape: (batch_size, num_labels)
        logits = self._output_logit(self._output_feedforward(self._dropout(v)))
        output: Dict[str, Any] = {"logits": logits, "probs": torch.softmax(logits, dim=-1)}
        if metadata is not None:
            output["metadata"] = metadata
        self._add_to_output(output, sides, encodings)
        if label is not None:
            output["loss"] = nn.functional.cross_entropy(logits, label.long().view(-1))
            self._accuracy(logits, label)
        return output

    def _add_to_output(
        self, output: Dict[str, Any], sides: List[Side], encodings: List[Encoding]
    ) -> None:
        """Subclasses add what their encodings show (e.g. the trees and where they came
        from)."""

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        return add_labels(output_dict, self.vocab, self._label_namespace)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self._accuracy.get_metric(reset)}

    default_predictor = "spinn_nli"


def _bool(mask: torch.Tensor) -> torch.BoolTensor:
    return cast(torch.BoolTensor, mask.bool())
