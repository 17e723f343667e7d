from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import PearsonCorrelation, SpearmanCorrelation
from torch import nn

from spinn_allennlp.modules.sentence_encoder_model import SentenceEncoderModel
from spinn_allennlp.modules.tree_encoder import encode
from spinn_allennlp.training.metrics import MeanSquaredError


def sparse_target(score: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Tai et al. (2015, §4.2): the distribution p over ratings 1..K with expectation ``score``
    that puts all its mass on floor(score) and floor(score) + 1:
    p_{floor(y)+1} = y - floor(y), p_{floor(y)} = floor(y) - y + 1.

    score: (B,) in [1, K]; returns (B, K)."""
    floor = score.floor().clamp(1, num_classes)
    upper_weight = (score - floor).unsqueeze(1)
    ratings = torch.arange(1, num_classes + 1, device=score.device, dtype=score.dtype)
    at_floor = (ratings == floor.unsqueeze(1)).to(score.dtype)
    above = (ratings == floor.unsqueeze(1) + 1).to(score.dtype)
    return at_floor * (1 - upper_weight) + above * upper_weight


@Model.register("tree_relatedness")
class TreeRelatedness(SentenceEncoderModel):
    """Semantic relatedness of a sentence pair, as Tai et al. (2015, §4.2) on SICK: both
    sentences encoded by one shared encoder into h_L and h_R, then

        h_x = h_L * h_R,  h_+ = |h_L - h_R|,
        h_s = sigmoid(W_x h_x + W_+ h_+ + b),
        p = softmax(W_p h_s + b_p)  over ratings 1..K,   prediction r^T p,

    trained on the KL divergence from the sparse target distribution of the gold score (see
    `sparse_target`) to p. The encoder gets each sentence's tree: `*_transitions` for a
    `TreeEncoder` (SPINN), `*_heads` for a `DependencyTreeEncoder` (the Child-Sum Tree-LSTM);
    any other `Seq2VecEncoder` (AllenNLP's LSTM) works on the words alone.

    Metrics: Pearson's r, Spearman's rho and the mean squared error of the predicted scores.

    Registered as a `Model` with name "tree_relatedness".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2VecEncoder`
    hidden_dim : `int`, optional (default = `50`)
        Size of h_s (50 in the paper).
    num_classes : `int`, optional (default = `5`)
        K, the highest rating.
    dropout : `float`, optional (default = `0.0`)
        Drop rate on the sentence vectors (the paper used none on this task).
    initializer : `InitializerApplicator`, optional (default = `None`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        hidden_dim: int = 50,
        num_classes: int = 5,
        dropout: float = 0.0,
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._take_encoder("tree_relatedness", text_field_embedder, encoder)
        self._num_classes = num_classes
        self._dropout = nn.Dropout(dropout)
        # W_x and W_+ side by side: one layer on [h_x; h_+].
        self._hidden = nn.Linear(2 * encoder.get_output_dim(), hidden_dim)
        self._output = nn.Linear(hidden_dim, num_classes)
        self._pearson = PearsonCorrelation()
        self._spearman = SpearmanCorrelation()
        self._mse = MeanSquaredError()
        if initializer is not None:
            initializer(self)

    def _encode(
        self,
        tokens: TextFieldTensors,
        transitions: Optional[torch.Tensor],
        heads: Optional[torch.Tensor],
    ) -> torch.Tensor:
        # Shape: (batch_size, num_tokens, embedding_dim)
        embedded = self._embedder(tokens)
        mask = util.get_text_field_mask(tokens)
        return encode(self._encoder, embedded, mask, transitions, heads=heads).sentence

    def forward(
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        premise_transitions: Optional[torch.Tensor] = None,
        hypothesis_transitions: Optional[torch.Tensor] = None,
        premise_heads: Optional[torch.Tensor] = None,
        hypothesis_heads: Optional[torch.Tensor] = None,
        relatedness: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        # Shape: (batch_size, encoder_dim) each
        left = self._dropout(self._encode(premise, premise_transitions, premise_heads))
        right = self._dropout(self._encode(hypothesis, hypothesis_transitions, hypothesis_heads))
        # Shape: (batch_size, 2 * encoder_dim)
        features = torch.cat([left * right, (left - right).abs()], dim=-1)
        # Shape: (batch_size, num_classes)
        log_probs = torch.log_softmax(self._output(torch.sigmoid(self._hidden(features))), dim=-1)
        ratings = torch.arange(
            1, self._num_classes + 1, dtype=log_probs.dtype, device=log_probs.device
        )
        # Shape: (batch_size,)
        score = log_probs.exp() @ ratings
        output: Dict[str, Any] = {"score": score, "probs": log_probs.exp()}
        if metadata is not None:
            output["metadata"] = metadata
        if relatedness is not None:
            gold = relatedness.to(log_probs.dtype).view(-1)
            if bool(((gold < 1) | (gold > self._num_classes)).any()):
                raise ValueError(f"relatedness scores must be in 1..{self._num_classes}")
            target = sparse_target(gold, self._num_classes)
            # KL(target || p), averaged over the batch.
            output["loss"] = nn.functional.kl_div(log_probs, target, reduction="batchmean")
            self._pearson(score.detach(), gold)
            self._spearman(score.detach(), gold)
            self._mse(score.detach(), gold)
        return self._with_encoder_losses(output)

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        output_dict["relatedness"] = [float(s) for s in output_dict["score"].detach().cpu()]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {
            "pearson": float(self._pearson.get_metric(reset)),
            "spearman": float(self._spearman.get_metric(reset)),
            "mse": self._mse.get_metric(reset),
            **self._encoder_loss_metrics(reset),
        }

    default_predictor = "tree_relatedness"
