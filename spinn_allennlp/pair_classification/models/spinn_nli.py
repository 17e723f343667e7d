from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import CategoricalAccuracy
from torch import nn

from spinn_allennlp.modules.beam_losses import best_tree_loss, mix_beam_predictions
from spinn_allennlp.modules.policy_gradient import PolicyGradient
from spinn_allennlp.modules.relu_mlp import mlp_output_dim, relu_mlp
from spinn_allennlp.modules.sentence_batches import SentenceBatch, encode_together, repeat_rows
from spinn_allennlp.modules.sentence_encoder_model import SentenceEncoderModel
from spinn_allennlp.modules.tree_encoder import (
    given_trees,
    gold_like,
    num_reduce_types,
    parser_reads_token_ids,
    transitions_source,
)
from spinn_allennlp.pair_classification.models.readable_output import add_labels, add_readable_trees
from spinn_allennlp.training.metrics import ParseMetrics
from spinn_core.output import SpinnOutput
from spinn_core.policies import TransitionPolicy
from spinn_core.supervision import (
    parser_predictions,
    parser_types,
    reduce_type_loss,
    transition_loss,
)


@Model.register("spinn_nli")
class SpinnNliClassifier(SentenceEncoderModel):
    """The SPINN paper's NLI model (§4, eq. 6-7): premise and hypothesis encoded by one shared
    sentence encoder, the features `[p; h; p - h; p * h]` classified by an MLP of ReLU layers
    and a softmax layer.

    The encoder is SPINN (`"spinn"`, or any `TreeEncoder`) or any `Seq2VecEncoder`, such as
    AllenNLP's `"lstm"` for the paper's baseline. With a tree encoder the gold transitions
    (`premise_transitions`, `hypothesis_transitions`) are passed to it and the output also has
    the transitions it followed; with a parser, the loss adds `transition_loss_weight` (the
    paper's alpha) times the transition cross-entropy of premise and hypothesis (each averaged
    over that sentence batch's steps), and the metrics include the parse metrics. With typed
    REDUCE (an encoder with `reduce_types` and a reader giving `premise_reduce_types` /
    `hypothesis_reduce_types`), the same weight times the type cross-entropy at the gold
    REDUCEs is added, and the metrics include the labeled bracket F1. The paper's L2 term is
    AllenNLP's `regularizer`.

    Dropout and batch normalisation sit on the MLP's input and on each layer's output (§4.1;
    the encoder has its own for the word projection). `dropout` is a DROP rate: the paper's
    Table 2 gives keep rates (94% keep = 0.06 here). Initialisation: the softmax layer is
    uniform in [-0.005, 0.005] and the MLP has He initialisation (§4.1); the encoder's is an
    `initializer` in the configs.

    Premise and hypothesis go through the encoder in one call (`encode_pairs_together`): one
    batch of 2 x batch_size sentences, so a step-by-step encoder (SPINN with tracking, the
    LSTM) runs its sequential steps once per pair batch instead of twice. In evaluation mode
    this equals two calls up to float rounding. In training mode, batch statistics inside the
    encoder (SPINN's `projection_batch_norm`) are taken over premise and hypothesis words
    together, and its running statistics are updated once per batch instead of twice; set
    `encode_pairs_together` to false for separate calls (the behaviour of version 0.1.0).

    Registered as a `Model` with name "spinn_nli".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Embeds premise and hypothesis tokens.
    encoder : `Seq2VecEncoder`
        The shared sentence encoder; its input size must be the embedder's output size.
    mlp_layers : `int`, optional (default = `2`)
    mlp_dim : `int`, optional (default = `1024`)
    dropout : `float`, optional (default = `0.0`)
        Drop rate on the MLP's input and on each layer's output.
    batch_norm : `bool`, optional (default = `True`)
        Batch normalisation on the MLP's input and on each layer's output.
    transition_loss_weight : `float`, optional (default = `0.0`)
        The paper's alpha; used only with an encoder that has a parser.
    label_namespace : `str`, optional (default = `"labels"`)
    encode_pairs_together : `bool`, optional (default = `True`)
        One encoder call for premises and hypotheses (see above), or one call each.
    policy_gradient : `PolicyGradient`, optional (default = `None`)
        Train the encoder's parser by REINFORCE from the label's loss (latent trees; the
        log-probability of a pair's trees is that of both sentences' trees).
    initializer : `InitializerApplicator`, optional (default = `None`)
    """

    classifies_each_tree = True

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        mlp_layers: int = 2,
        mlp_dim: int = 1024,
        dropout: float = 0.0,
        batch_norm: bool = True,
        transition_loss_weight: float = 0.0,
        label_namespace: str = "labels",
        encode_pairs_together: bool = True,
        initializer: Optional[InitializerApplicator] = None,
        policy_gradient: Optional[PolicyGradient] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._take_encoder(
            "spinn_nli", text_field_embedder, encoder, transition_loss_weight, policy_gradient
        )
        self._label_namespace = label_namespace
        self._encode_pairs_together = encode_pairs_together
        num_labels = vocab.get_vocab_size(label_namespace)

        features = 4 * encoder.get_output_dim()
        # He et al. initialisation of the ReLU layers (the paper's §4.1).
        self._mlp = relu_mlp(features, mlp_layers, mlp_dim, dropout, batch_norm)
        features = mlp_output_dim(features, mlp_layers, mlp_dim)
        self._output_layer = nn.Linear(features, num_labels)
        nn.init.uniform_(self._output_layer.weight, -0.005, 0.005)
        nn.init.uniform_(self._output_layer.bias, -0.005, 0.005)

        self._accuracy = CategoricalAccuracy()
        typed = num_reduce_types(encoder) > 0
        self._parse_metrics = ParseMetrics(labeled=typed and self.has_parser)
        if initializer is not None:
            initializer(self)

    def _sentence_batch(
        self, tokens: TextFieldTensors, transitions: Optional[torch.Tensor]
    ) -> SentenceBatch:
        # Shape: (batch_size, num_tokens, embedding_dim), (batch_size, num_tokens)
        return self._embedder(tokens), util.get_text_field_mask(tokens), transitions

    def forward(
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        premise_transitions: Optional[torch.Tensor] = None,
        hypothesis_transitions: Optional[torch.Tensor] = None,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
        premise_reduce_types: Optional[torch.Tensor] = None,
        hypothesis_reduce_types: Optional[torch.Tensor] = None,
    ) -> Dict[str, Any]:
        # Lines without a parse have empty transitions fields: a batch of only such lines has
        # no trees at all; in a mixed batch the encoder decides for each sentence without one.
        premise_transitions = given_trees(premise_transitions)
        hypothesis_transitions = given_trees(hypothesis_transitions)
        sides_trees = [premise_transitions, hypothesis_transitions]
        # REDUCE types are read with the side's trees only.
        types = [premise_reduce_types, hypothesis_reduce_types]
        types = [t if trees is not None else None for t, trees in zip(types, sides_trees)]
        latent = self._policy_gradient is not None and self.training and label is not None
        # A parser with embeddings of its own reads the token ids.
        token_ids = None
        if parser_reads_token_ids(self._encoder):
            token_ids = [
                util.get_token_ids_from_text_field_tensors(side) for side in (premise, hypothesis)
            ]

        # A beam of mix "best_tree": each pair of trees' logits and score, for its loss.
        pairs_of_trees: List[Tuple[torch.Tensor, torch.Tensor]] = []

        def classify(policy: Optional[TransitionPolicy], copies: int = 1):
            # Embedded here, so that a rerun (a latent parser's baseline and PPO updates, after
            # the parameters have changed) starts from the inputs. `copies`: the batch
            # repeated (several trees drawn per pair in one pass; policy_gradient.draws).
            batches = [
                _repeated(self._sentence_batch(premise, premise_transitions), copies),
                _repeated(self._sentence_batch(hypothesis, hypothesis_transitions), copies),
            ]
            side_types = [repeat_rows(side, copies) for side in types]
            side_ids = None if token_ids is None else [repeat_rows(i, copies) for i in token_ids]
            # Shape: (batch_size, encoder_dim) each
            (p, premise_out), (h, hypothesis_out) = self._encode(
                batches, side_types, policy, side_ids
            )
            logits = self._classify(p, h, premise_out, hypothesis_out, pairs_of_trees)
            return logits, [premise_out, hypothesis_out]

        policy = self._policy_gradient.policy() if self._policy_gradient and latent else None
        logits, (premise_out, hypothesis_out) = classify(policy)
        output: Dict[str, Any] = {"logits": logits, "probs": torch.softmax(logits, dim=-1)}
        if metadata is not None:
            output["metadata"] = metadata

        sides = list(zip(("premise", "hypothesis"), (premise_out, hypothesis_out), sides_trees))
        for name, out, gold in sides:
            if out is not None:
                output[f"{name}_transitions"] = out.transitions
                output[f"{name}_transitions_source"] = transitions_source(
                    out.mode, gold is not None, metadata, logits.size(0), self.has_parser
                )

        if label is not None:
            gold_labels = label.long().view(-1)
            loss = nn.functional.cross_entropy(logits, gold_labels)
            if pairs_of_trees:
                loss = loss + best_tree_loss(*pairs_of_trees[-1], gold_labels)
            self._accuracy(logits, label)
            if self._policy_gradient is not None and latent:
                loss = loss + self._policy_gradient.classifier_loss(
                    logits, gold_labels, [premise_out, hypothesis_out], classify
                )
            for (_, out, gold), gold_types in zip(sides, types):
                if out is not None and out.transition_logits is not None and gold is not None:
                    loss = self._with_parser_loss(loss, out, gold, gold_types)
            output["loss"] = loss
        return self._with_encoder_losses(output)

    def _classify(
        self,
        p: torch.Tensor,
        h: torch.Tensor,
        premise: Optional[SpinnOutput],
        hypothesis: Optional[SpinnOutput],
        keep: List[Tuple[torch.Tensor, torch.Tensor]],
    ) -> torch.Tensor:
        """Shape (batch_size, num_labels): the logits of the pairs' features, or of the mixed
        predictions of a beam that mixes them (`premise.beam_roots` set)."""
        if premise is not None and premise.beam_roots is not None:
            assert hypothesis is not None  # one encoder: both sides are beams
            return mixed_pair_predictions(premise, hypothesis, self._features_to_logits, keep)
        return self._features_to_logits(torch.cat([p, h, p - h, p * h], dim=-1))

    def _features_to_logits(self, features: torch.Tensor) -> torch.Tensor:
        # Shape: (rows, 4 * encoder_dim) -> (rows, num_labels)
        return self._output_layer(self._mlp(features))

    def _encode(
        self,
        batches: List[SentenceBatch],
        types: List[Optional[torch.Tensor]],
        policy: Optional[TransitionPolicy],
        token_ids: Optional[List[torch.Tensor]],
    ) -> List[Tuple[torch.Tensor, Optional[SpinnOutput]]]:
        """Premises and hypotheses encoded in one call (`encode_pairs_together`) or one each:
        each side's sentence vectors and, from a tree encoder, its whole output."""
        if self._encode_pairs_together:
            return encode_together(
                self._encoder, batches, types, policy=policy, parser_tokens=token_ids
            )
        return [
            encode_together(
                self._encoder,
                [batch],
                [batch_types],
                policy=policy,
                parser_tokens=None if token_ids is None else [token_ids[side]],
            )[0]
            for side, (batch, batch_types) in enumerate(zip(batches, types))
        ]

    def _with_parser_loss(
        self,
        loss: torch.Tensor,
        out: SpinnOutput,
        gold: torch.Tensor,
        gold_types: Optional[torch.Tensor],
    ) -> torch.Tensor:
        """`loss` plus one side's weighted transition loss (and REDUCE type loss, with typed
        REDUCE), the side's parse scored against its gold tree."""
        gold = gold_like(gold, out)
        if gold_types is not None:
            gold_types = gold_like(gold_types, out)
        typed = out.reduce_type_logits is not None and gold_types is not None
        # A zero weight adds nothing, not even a zero gradient: the encoder counts any backward
        # pass into its parser as training it (and warns otherwise).
        if self._transition_loss_weight:
            loss = loss + self._transition_loss_weight * transition_loss(out, gold)
        if typed:
            assert gold_types is not None
            if self._transition_loss_weight:
                loss = loss + self._transition_loss_weight * reduce_type_loss(out, gold_types)
            self._parse_metrics(parser_predictions(out), gold, parser_types(out), gold_types)
        else:
            self._parse_metrics(parser_predictions(out), gold)
        return loss

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        return add_readable_trees(add_labels(output_dict, self.vocab, self._label_namespace))

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"accuracy": self._accuracy.get_metric(reset)}
        if self.has_parser:
            metrics.update(self._parse_metrics.get_metric(reset))
        metrics.update(self._encoder_loss_metrics(reset))
        return metrics

    default_predictor = "spinn_nli"


def _repeated(batch: SentenceBatch, copies: int) -> SentenceBatch:
    """A sentence batch repeated `copies` times (`repeat_rows`)."""
    inputs, mask, transitions = batch
    return repeat_rows(inputs, copies), repeat_rows(mask, copies), repeat_rows(transitions, copies)


def mixed_pair_predictions(
    premise: SpinnOutput,
    hypothesis: SpinnOutput,
    features_to_logits: Callable[[torch.Tensor], torch.Tensor],
    keep: List[Tuple[torch.Tensor, torch.Tensor]],
) -> torch.Tensor:
    """A beam that mixes predictions, on pairs: each of the K x K pairs of a premise's tree
    and a hypothesis's tree classified alone (the features of its two roots), the label
    distributions mixed by the pairs' weights. A pair's score is the sum of its two trees'
    summed log-probabilities, so its weight is the product of the two sentences' beam
    weights (the softmax over pairs factorises), and the label's marginal likelihood is
    sum_ij w_i v_j p(y | premise tree i, hypothesis tree j). With `mix: "best_tree"` the
    pairs' logits and scores go to `keep`: the pair under which the label is likeliest is
    the parser's target for both sentences (`best_tree_loss`). In training the MLP's batch
    normalisation sees every pair's features as a row. `features_to_logits`: the model's
    MLP and softmax layer."""
    assert premise.beam_roots is not None and premise.beam_scores is not None
    assert hypothesis.beam_roots is not None and hypothesis.beam_scores is not None
    batch_size, width, dim = premise.beam_roots.shape
    # Shape: (batch_size, width, width, dim): premise tree i beside hypothesis tree j.
    p = premise.beam_roots.unsqueeze(2).expand(-1, -1, width, -1)
    h = hypothesis.beam_roots.unsqueeze(1).expand(-1, width, -1, -1)
    features = torch.cat([p, h, p - h, p * h], dim=-1).reshape(-1, 4 * dim)
    # Shape: (batch_size, width * width, num_labels), (batch_size, width * width)
    per_pair = features_to_logits(features).view(batch_size, width * width, -1)
    scores = (premise.beam_scores.unsqueeze(2) + hypothesis.beam_scores.unsqueeze(1)).flatten(1)
    if premise.beam_mix == "best_tree":
        keep.append((per_pair, scores))
    return mix_beam_predictions(per_pair, scores)
