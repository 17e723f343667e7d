from typing import Any, Dict, List, Optional, Tuple

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.data.vocabulary import DEFAULT_OOV_TOKEN
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from torch import nn

from spinn_allennlp.data.trees import readable_tree
from spinn_allennlp.modules.sentence_encoder_model import SentenceEncoderModel
from spinn_allennlp.modules.tree_encoder import encode, has_nodes, transitions_source
from spinn_allennlp.settings_errors import configuration_errors
from spinn_allennlp.training.metrics import ParseMetrics, Share
from spinn_core import rules
from spinn_core.output import GIVEN
from spinn_core.supervision import parser_predictions, transition_loss
from spinn_core.transitions import PAD, fold, node_spans

UNLABELED = -1


@Model.register("tree_node_classifier")
class TreeNodeClassifier(SentenceEncoderModel):
    """Classifies every node of a sentence's tree, as Tai et al. (2015, §4.1) on the Stanford
    Sentiment Treebank: a softmax layer on each node's h, trained on the negative
    log-likelihood of every labelled node (averaged over the batch's labelled nodes).

    With a `TreeEncoder` (SPINN) the nodes are the binary tree's, one per transition step
    (`node_labels` aligned with `transitions`); with a `DependencyTreeEncoder` (the Child-Sum
    Tree-LSTM) one per word (`projection_labels`, aligned with `heads`); with any other
    `Seq2VecEncoder` (AllenNLP's LSTM) only the sentence vector is classified, against the
    root's `label`. The sentence's label is the root node's.

    With a parser (full SPINN) the loss adds `transition_loss_weight` times the transition
    cross-entropy against the given trees, and the parse metrics are reported. At evaluation
    such an encoder follows its own parse: a node of that tree is scored against the gold
    label of the constituent with the same span, when the gold tree has one.

    Metrics: `root_accuracy` (the sentence's label) and, with a tree encoder, `phrase_accuracy`
    (every labelled node, the root and the words included).

    Registered as a `Model` with name "tree_node_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2VecEncoder`
        A `TreeEncoder`, a `DependencyTreeEncoder` or any `Seq2VecEncoder`.
    num_labels : `int`, optional (default = `5`)
        Number of classes (5 for SST fine-grained, 2 for binary).
    label_names : `List[str]`, optional (default = `None`)
        Names of the classes for human-readable output (default: their numbers).
    dropout : `float`, optional (default = `0.0`)
        Drop rate on the node states before the softmax layer.
    word_dropout : `float`, optional (default = `0.0`)
        In training, the chance of replacing each word by the unknown-word token.
    supervise_nodes : `bool`, optional (default = `True`)
        Train on every labelled node (False: the root only).
    transition_loss_weight : `float`, optional (default = `0.0`)
        Alpha of the transition loss, for an encoder with a parser.
    initializer : `InitializerApplicator`, optional (default = `None`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        num_labels: int = 5,
        label_names: Optional[List[str]] = None,
        dropout: float = 0.0,
        word_dropout: float = 0.0,
        supervise_nodes: bool = True,
        transition_loss_weight: float = 0.0,
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._take_encoder(
            "tree_node_classifier", text_field_embedder, encoder, transition_loss_weight
        )
        with configuration_errors():
            rules.check_label_names(label_names, num_labels)
        self._num_labels = num_labels
        self._label_names = label_names or [str(i) for i in range(num_labels)]
        self._dropout = nn.Dropout(dropout)
        self._word_dropout = word_dropout
        self._supervise_nodes = supervise_nodes
        self._output_layer = nn.Linear(encoder.get_output_dim(), num_labels)
        self._root_accuracy = Share()
        self._phrase_accuracy = Share()
        self._parse_metrics = ParseMetrics()
        if initializer is not None:
            initializer(self)

    @property
    def has_nodes(self) -> bool:
        return has_nodes(self._encoder)

    def _drop_words(self, tokens: TextFieldTensors) -> TextFieldTensors:
        """Word dropout: each real word replaced by the unknown token with the set chance."""
        if not (self.training and self._word_dropout > 0):
            return tokens
        unknown = self.vocab.get_token_index(DEFAULT_OOV_TOKEN, "tokens")
        dropped: Dict[str, Dict[str, torch.Tensor]] = {}
        for indexer, tensors in tokens.items():
            dropped[indexer] = dict(tensors)
            if "tokens" in tensors:
                ids = tensors["tokens"]
                drop = (torch.rand(ids.shape, device=ids.device) < self._word_dropout) & (ids > 0)
                dropped[indexer]["tokens"] = ids.masked_fill(drop, unknown)
        return dropped

    def forward(
        self,
        tokens: TextFieldTensors,
        transitions: Optional[torch.Tensor] = None,
        heads: Optional[torch.Tensor] = None,
        node_labels: Optional[torch.Tensor] = None,
        projection_labels: Optional[torch.Tensor] = None,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        # Shape: (batch_size, num_tokens, embedding_dim)
        embedded = self._embedder(self._drop_words(tokens))
        # Shape: (batch_size, num_tokens)
        mask = util.get_text_field_mask(tokens)
        output: Dict[str, Any] = {}
        node_targets: Optional[torch.Tensor] = None
        transition_term: Optional[torch.Tensor] = None
        encoding = encode(
            self._encoder, embedded, mask, transitions, heads=heads, return_nodes=True
        )
        sentence = encoding.sentence
        # Shape: (batch_size, num_nodes, hidden_dim): a binary tree's nodes, one per step in
        # post-order, or a dependency tree's, one per word; None for a plain encoder.
        node_hidden = encoding.node_hidden
        encoded = encoding.tree
        if encoded is not None:
            output["transitions"] = encoded.transitions
            output["transitions_source"] = transitions_source(
                encoded.mode, transitions is not None, metadata, mask.size(0)
            )
            if node_labels is not None:
                node_targets = labels_of_followed_nodes(
                    node_labels, transitions, encoded.transitions, encoded.mode != GIVEN
                )
            if encoded.transition_logits is not None and transitions is not None:
                transition_term = transition_loss(encoded, transitions)
                self._parse_metrics(parser_predictions(encoded), transitions)
        if encoding.dependency is not None:
            output["heads"] = encoding.dependency.heads
            node_targets = projection_labels

        # Shape: (batch_size, num_labels)
        logits = self._output_layer(self._dropout(sentence))
        output["logits"] = logits
        output["probs"] = torch.softmax(logits, dim=-1)
        if node_hidden is not None:
            # Shape: (batch_size, num_nodes, num_labels)
            output["node_logits"] = self._output_layer(self._dropout(node_hidden))
        if metadata is not None:
            output["metadata"] = metadata

        if label is not None or node_targets is not None:
            supervised_nodes = self._supervise_nodes and node_targets is not None
            if supervised_nodes:
                assert node_targets is not None
                node_logits = output["node_logits"]
                node_targets = node_targets[:, : node_logits.size(1)].long()
                self._check_labels(node_targets)
                labelled = node_targets != UNLABELED
                # Mean over the batch's labelled nodes (Tai et al. §4.1).
                loss = nn.functional.cross_entropy(
                    node_logits[labelled], node_targets[labelled], reduction="sum"
                ) / labelled.sum().clamp(min=1)
            else:
                assert label is not None
                loss = nn.functional.cross_entropy(logits, label.long().view(-1))
            if node_targets is not None and "node_logits" in output:
                self._score_phrases(output["node_logits"], node_targets)
            if label is not None:
                gold = label.long().view(-1)
                self._check_labels(gold)
                self._root_accuracy(int((logits.argmax(dim=-1) == gold).sum()), gold.numel())
            # A zero weight adds nothing, not even a zero gradient into the parser (the
            # encoder reports a parser that no gradient reaches).
            if transition_term is not None and self._transition_loss_weight:
                loss = loss + self._transition_loss_weight * transition_term
            output["loss"] = loss
        return self._with_encoder_losses(output)

    def _score_phrases(self, node_logits: torch.Tensor, node_targets: torch.Tensor) -> None:
        targets = node_targets[:, : node_logits.size(1)].long()
        labelled = targets != UNLABELED
        hits = (node_logits.argmax(dim=-1) == targets) & labelled
        self._phrase_accuracy(int(hits.sum()), int(labelled.sum()))

    def _check_labels(self, labels: torch.Tensor) -> None:
        if bool((labels >= self._num_labels).any()) or bool((labels < UNLABELED).any()):
            raise ValueError(
                f"labels must be in 0..{self._num_labels - 1} (or -1 for none), got "
                f"{sorted(set(labels.flatten().tolist()))}; does num_labels match the reader?"
            )

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        probs = output_dict["probs"].detach().cpu()
        output_dict["label"] = [self._label_names[int(i)] for i in probs.argmax(dim=-1)]
        output_dict["label_probs"] = [
            {name: float(p) for name, p in zip(self._label_names, row)} for row in probs
        ]
        if "node_logits" not in output_dict or "metadata" not in output_dict:
            return output_dict
        node_labels = output_dict["node_logits"].detach().argmax(dim=-1).cpu().tolist()
        trees, nodes = [], []
        for b, meta in enumerate(output_dict["metadata"]):
            tokens = meta["tokens"]
            if "transitions" in output_dict:
                steps = [t for t in output_dict["transitions"][b].tolist() if t != PAD]
                spans = node_spans(steps)
                labels = node_labels[b][: len(steps)]
                trees.append(_labeled_tree_string(tokens, steps, labels))
                nodes.append(
                    [
                        {"phrase": " ".join(tokens[s : e + 1]), "label": self._label_names[y]}
                        for (s, e), y in zip(spans, labels)
                    ]
                )
                output_dict.setdefault("tree", []).append(readable_tree(tokens, steps))
            else:
                heads = output_dict["heads"][b].tolist()[: len(tokens)]
                nodes.append(
                    [
                        {"word": word, "head": head, "label": self._label_names[y]}
                        for word, head, y in zip(tokens, heads, node_labels[b])
                    ]
                )
        if trees:
            output_dict["labeled_tree"] = trees
        output_dict["nodes"] = nodes
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"root_accuracy": self._root_accuracy.get_metric(reset)}
        if self.has_nodes:
            metrics["phrase_accuracy"] = self._phrase_accuracy.get_metric(reset)
        if self.has_parser:
            metrics.update(self._parse_metrics.get_metric(reset))
        metrics.update(self._encoder_loss_metrics(reset))
        return metrics

    default_predictor = "tree_node_classifier"


def labels_of_followed_nodes(
    node_labels: torch.Tensor,
    gold: Optional[torch.Tensor],
    followed: torch.Tensor,
    own_parse: bool,
) -> torch.Tensor:
    """Shape (B, T): the gold label of each node the encoder built. Following the given
    transitions the nodes are the gold ones; following its own parse a node gets the label of
    the gold constituent with the same span, or none."""
    if not own_parse or gold is None:
        return node_labels
    targets = torch.full(followed.shape, UNLABELED, dtype=torch.long)
    for b, (gold_row, followed_row, labels) in enumerate(
        zip(gold.tolist(), followed.tolist(), node_labels.tolist())
    ):
        by_span: Dict[Tuple[int, int], int] = {
            span: y for span, y in zip(node_spans(gold_row), labels) if span != (-1, -1)
        }
        for t, span in enumerate(node_spans(followed_row)):
            targets[b, t] = by_span.get(span, UNLABELED)
    return targets.to(node_labels.device)


def _labeled_tree_string(tokens: List[str], transitions: List[int], labels: List[int]) -> str:
    """SST's format: ``(3 (2 The) (4 (3 good) (2 film)))``, a label on every node (the trees
    of a forest side by side)."""
    return " ".join(
        fold(
            transitions,
            lambda word, step: f"({labels[step]} {tokens[word]})",
            lambda left, right, step: f"({labels[step]} {left} {right})",
        ).stack
    )
