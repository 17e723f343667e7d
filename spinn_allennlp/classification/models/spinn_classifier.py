from typing import Any, Dict, List, Optional

import torch
from allennlp.common.util import is_distributed
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import CategoricalAccuracy
from torch import nn

from spinn_allennlp.data.trees import readable_tree
from spinn_allennlp.modules.beam_losses import best_tree_loss, mix_beam_predictions
from spinn_allennlp.modules.policy_gradient import PolicyGradient
from spinn_allennlp.modules.relu_mlp import mlp_output_dim, relu_mlp
from spinn_allennlp.modules.sentence_batches import repeat_rows
from spinn_allennlp.modules.sentence_encoder_model import SentenceEncoderModel
from spinn_allennlp.modules.tree_encoder import (
    encode,
    given_trees,
    gold_like,
    parser_reads_token_ids,
    transitions_source,
)
from spinn_allennlp.training.metrics import ParseMetrics
from spinn_core.output import SpinnOutput
from spinn_core.policies import TransitionPolicy
from spinn_core.supervision import parser_predictions, transition_loss


@Model.register("spinn_classifier")
class SpinnClassifier(SentenceEncoderModel):
    """A sentence classifier on a sentence encoder: the sentence vector through an MLP of ReLU
    layers and a softmax layer (the NLI model of the SPINN paper with one sentence instead of a
    pair's four features), e.g. ListOps.

    With a tree encoder (`TreeEncoder`) the gold `transitions`, when the reader gives them, are
    passed to it, and the output has the transitions it followed. With a parser the loss adds
    `transition_loss_weight` (the paper's alpha) times the transition cross-entropy against the
    gold transitions (0 for a parser that learns only from the label, NSHRDLU Model 4), and the
    metrics include how its trees compare with the gold ones (`ParseMetrics`: transition and
    tree accuracy, valid trees, unlabeled bracket F1). With `policy_gradient` the parser learns
    from the label alone, by REINFORCE on sampled trees (latent trees; see `PolicyGradient`).

    Registered as a `Model` with name "spinn_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2VecEncoder`
        Its input size must be the embedder's output size.
    mlp_layers : `int`, optional (default = `1`)
    mlp_dim : `int`, optional (default = `128`)
    dropout : `float`, optional (default = `0.0`)
        Drop rate on the MLP's input and on each layer's output.
    batch_norm : `bool`, optional (default = `False`)
        Batch normalisation on the MLP's input and on each layer's output.
    transition_loss_weight : `float`, optional (default = `0.0`)
        The paper's alpha; used only with an encoder that has a parser.
    policy_gradient : `PolicyGradient`, optional (default = `None`)
        Train the encoder's parser by REINFORCE from the label's loss (latent trees).
    length_buckets : `List[int]`, optional (default = `None`)
        Also report the accuracy on examples of at most each of these numbers of tokens and
        above the last (`accuracy_tokens_le_100`, `accuracy_tokens_gt_100` for `[100]`; a bucket
        no example fell in is left out of the metrics): how
        ListOps results are reported, since training sees only short examples.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional (default = `None`)
    """

    classifies_each_tree = True

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        mlp_layers: int = 1,
        mlp_dim: int = 128,
        dropout: float = 0.0,
        batch_norm: bool = False,
        transition_loss_weight: float = 0.0,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        policy_gradient: Optional[PolicyGradient] = None,
        length_buckets: Optional[List[int]] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._take_encoder(
            "spinn_classifier",
            text_field_embedder,
            encoder,
            transition_loss_weight,
            policy_gradient,
        )
        self._label_namespace = label_namespace

        features = encoder.get_output_dim()
        self._mlp = relu_mlp(features, mlp_layers, mlp_dim, dropout, batch_norm)
        features = mlp_output_dim(features, mlp_layers, mlp_dim)
        self._output_layer = nn.Linear(features, vocab.get_vocab_size(label_namespace))

        self._accuracy = CategoricalAccuracy()
        # Bucket upper bounds (tokens), the last one open: accuracy per bucket.
        self._length_buckets = sorted(length_buckets or [])
        self._bucket_accuracy = {
            name: CategoricalAccuracy() for name in _bucket_names(self._length_buckets)
        }
        self._parse_metrics = ParseMetrics()
        if initializer is not None:
            initializer(self)

    def forward(
        self,
        tokens: TextFieldTensors,
        transitions: Optional[torch.Tensor] = None,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        # A batch of lines without a parse (each an empty transitions field) has no trees; in a
        # mixed batch the encoder decides for each sentence without one.
        transitions = given_trees(transitions)
        # Shape: (batch_size, num_tokens)
        mask = util.get_text_field_mask(tokens)
        latent = self._policy_gradient is not None and self.training and label is not None
        policy = self._policy_gradient.policy() if self._policy_gradient and latent else None
        # A parser with embeddings of its own reads the token ids.
        parser_tokens = (
            util.get_token_ids_from_text_field_tensors(tokens)
            if parser_reads_token_ids(self._encoder)
            else None
        )

        # A beam of mix "best_tree" (hard EM over the beam): each tree's logits, for its loss.
        per_tree_logits: List[torch.Tensor] = []

        def classify(policy: Optional[TransitionPolicy], copies: int = 1):
            # Embedded here, so that a rerun (a latent parser's baseline and PPO updates, after
            # the parameters have changed) starts from the inputs. `copies`: the batch
            # repeated (several trees drawn per line in one pass; policy_gradient.draws).
            # Shape: (copies * batch_size, num_tokens, embedding_dim)
            embedded = repeat_rows(self._embedder(tokens), copies)
            encoding = encode(
                self._encoder,
                embedded,
                repeat_rows(mask, copies),
                repeat_rows(transitions, copies),
                policy=policy,
                parser_tokens=repeat_rows(parser_tokens, copies),
            )
            tree = encoding.tree
            if tree is not None and tree.beam_roots is not None and tree.beam_scores is not None:
                return self._mixed_predictions(tree, per_tree_logits), [tree]
            # Shape: (batch_size, num_labels)
            return self._output_layer(self._mlp(encoding.sentence)), [encoding.tree]

        # encoded: a tree encoder's whole output; None for any other encoder
        logits, (encoded,) = classify(policy)
        output: Dict[str, Any] = {"logits": logits, "probs": torch.softmax(logits, dim=-1)}
        if metadata is not None:
            output["metadata"] = metadata
        if encoded is not None:
            output["transitions"] = encoded.transitions
            output["transitions_source"] = transitions_source(
                encoded.mode, transitions is not None, metadata, logits.size(0), self.has_parser
            )

        if label is not None:
            gold = label.long().view(-1)
            loss = nn.functional.cross_entropy(logits, gold)
            if per_tree_logits and encoded is not None and encoded.beam_scores is not None:
                loss = loss + best_tree_loss(per_tree_logits[-1], encoded.beam_scores, gold)
            self._accuracy(logits, label)
            self._score_buckets(logits, label, mask)
            if self._policy_gradient is not None and latent:
                loss = loss + self._policy_gradient.classifier_loss(
                    logits, gold, [encoded], classify
                )
            if encoded is not None and encoded.transition_logits is not None:
                if transitions is not None:
                    gold_transitions = gold_like(transitions, encoded)
                    if self._transition_loss_weight:
                        loss = loss + self._transition_loss_weight * transition_loss(
                            encoded, gold_transitions
                        )
                    self._parse_metrics(parser_predictions(encoded), gold_transitions)
            output["loss"] = loss
        return self._with_encoder_losses(output)

    def _mixed_predictions(self, tree: SpinnOutput, keep: List[torch.Tensor]) -> torch.Tensor:
        """A beam that mixes predictions: each tree's root (`tree.beam_roots`: (batch_size,
        width, D)) classified alone, the label distributions mixed by the beam's weights (the
        softmax of `tree.beam_scores`); the log of the mixture serves as logits (its softmax is
        the mixture). Each tree's logits go to `keep` when the beam trains on its best tree."""
        assert tree.beam_roots is not None and tree.beam_scores is not None
        roots = tree.beam_roots
        # Shape: (batch_size, width, num_labels)
        per_tree = self._output_layer(self._mlp(roots.flatten(0, 1))).view(
            roots.size(0), roots.size(1), -1
        )
        if tree.beam_mix == "best_tree":
            keep.append(per_tree)
        return mix_beam_predictions(per_tree, tree.beam_scores)

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        labels = self.vocab.get_index_to_token_vocabulary(self._label_namespace)
        probs = output_dict["probs"].detach().cpu()
        output_dict["label"] = [labels[int(i)] for i in probs.argmax(dim=-1)]
        if "transitions" in output_dict and "metadata" in output_dict:
            output_dict["tree"] = [
                readable_tree(meta["tokens"], row.tolist())
                for row, meta in zip(output_dict["transitions"].cpu(), output_dict["metadata"])
            ]
        return output_dict

    def _score_buckets(self, logits: torch.Tensor, label: torch.Tensor, mask: torch.Tensor) -> None:
        if not self._bucket_accuracy:
            return
        lengths = mask.sum(dim=1)
        # Bucket index of each example: how many bounds its length exceeds.
        bounds = torch.tensor(self._length_buckets, device=lengths.device)
        bucket = (lengths.unsqueeze(1) > bounds).sum(dim=1)
        for index, accuracy in enumerate(self._bucket_accuracy.values()):
            rows = bucket == index
            if bool(rows.any()):
                accuracy(logits[rows], label[rows])

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"accuracy": self._accuracy.get_metric(reset)}
        for name, accuracy in self._bucket_accuracy.items():
            if accuracy.total_count == 0 and not is_distributed():
                # No example of that length was scored: no figure, rather than an accuracy of
                # 0.0 (a file of long lines only would show 0 % on short ones). Distributed, the
                # counts are summed over the workers first: every worker reports every bucket.
                continue
            metrics[name] = accuracy.get_metric(reset)
        if self.has_parser:
            metrics.update(self._parse_metrics.get_metric(reset))
        metrics.update(self._encoder_loss_metrics(reset))
        return metrics

    default_predictor = "spinn_classifier"


def _bucket_names(bounds: List[int]) -> List[str]:
    """`accuracy_tokens_le_B` for each bound, `accuracy_tokens_gt_LAST` above the last."""
    names = [f"accuracy_tokens_le_{bound}" for bound in bounds]
    return names + [f"accuracy_tokens_gt_{bounds[-1]}"] if bounds else []
