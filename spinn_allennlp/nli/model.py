"""The NLI pair classifier of the SPINN paper (§4.1, eq. 6-7), for any sentence encoder."""
from itertools import dropwhile
from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics import CategoricalAccuracy, Metric
from torch import nn

from spinn_allennlp.core.spinn import GIVEN, SpinnOutput
from spinn_allennlp.core.transitions import PAD, SHIFT, is_valid, transitions_to_string
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.nli.dataset_reader import LEFT_PAD_TOKEN


@Model.register("spinn_nli")
class SpinnNliClassifier(Model):
    """Encodes premise and hypothesis with one shared encoder (SPINN, or any Seq2VecEncoder
    such as AllenNLP's ``lstm`` for the paper's baseline), classifies
    ``[p; h; p - h; p * h]`` with an MLP of ReLU layers and a softmax layer.

    Loss (eq. 7): cross-entropy on the label plus ``transition_loss_weight`` (the paper's α)
    times the transition cross-entropy of premise and hypothesis, each averaged over that
    sentence batch's steps (with a parser and gold transitions). λ‖θ‖² is AllenNLP's
    ``regularizer``.

    Dropout and batch normalisation sit on the MLP's input and on each layer's output (§4.1;
    the encoder has its own for the word projection). ``dropout`` is a DROP rate: the paper's
    Table 2 gives keep rates (94% keep = 0.06 here). Initialisation: the softmax layer is
    uniform in [-0.005, 0.005] and the MLP has He initialisation (§4.1); the encoder's is an
    ``initializer`` in the configs.
    """

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
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._embedder = text_field_embedder
        self._encoder = encoder
        self._label_namespace = label_namespace
        self._transition_loss_weight = transition_loss_weight
        num_labels = vocab.get_vocab_size(label_namespace)

        features = 4 * encoder.get_output_dim()
        layers: List[nn.Module] = [nn.BatchNorm1d(features)] if batch_norm else []
        layers.append(nn.Dropout(dropout))
        for _ in range(mlp_layers):
            linear = nn.Linear(features, mlp_dim)
            nn.init.kaiming_normal_(linear.weight, nonlinearity="relu")  # He et al. (§4.1)
            nn.init.zeros_(linear.bias)
            layers += [linear, nn.ReLU()]
            if batch_norm:
                layers.append(nn.BatchNorm1d(mlp_dim))
            layers.append(nn.Dropout(dropout))
            features = mlp_dim
        self._mlp = nn.Sequential(*layers)
        self._output_layer = nn.Linear(features, num_labels)
        nn.init.uniform_(self._output_layer.weight, -0.005, 0.005)
        nn.init.uniform_(self._output_layer.bias, -0.005, 0.005)

        self._accuracy = CategoricalAccuracy()
        self._transition_accuracy = Share()  # of the gold transitions
        self._tree_accuracy = Share()  # of sentences whose whole tree is the gold tree
        self._valid_tree_rate = Share()  # of sentences whose transitions build a valid tree
        if initializer is not None:
            initializer(self)

    @property
    def _has_parser(self) -> bool:
        return isinstance(self._encoder, SpinnEncoder) and self._encoder.predict_transitions

    def _encode(self, tokens: TextFieldTensors, transitions: Optional[torch.Tensor]):
        embedded = self._embedder(tokens)
        mask = util.get_text_field_mask(tokens)
        if isinstance(self._encoder, SpinnEncoder):
            output = self._encoder.encode(embedded, mask, transitions)
            return output.sentence, output
        return self._encoder(embedded, mask), None

    def forward(  # type: ignore
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        premise_transitions: Optional[torch.Tensor] = None,
        hypothesis_transitions: Optional[torch.Tensor] = None,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        p, premise_out = self._encode(premise, premise_transitions)
        h, hypothesis_out = self._encode(hypothesis, hypothesis_transitions)
        features = torch.cat([p, h, p - h, p * h], dim=-1)
        logits = self._output_layer(self._mlp(features))
        output: Dict[str, Any] = {"logits": logits, "probs": torch.softmax(logits, dim=-1)}
        if metadata is not None:
            output["metadata"] = metadata

        for name, out, gold in (("premise", premise_out, premise_transitions),
                                ("hypothesis", hypothesis_out, hypothesis_transitions)):
            if out is not None:
                output[f"{name}_transitions"] = out.transitions
                output[f"{name}_transitions_source"] = [_source(out, gold)] * p.size(0)

        if label is not None:
            loss = nn.functional.cross_entropy(logits, label.long().view(-1))
            self._accuracy(logits, label)
            for out, gold in ((premise_out, premise_transitions),
                              (hypothesis_out, hypothesis_transitions)):
                if out is not None and out.transition_logits is not None and gold is not None:
                    loss = loss + self._transition_loss_weight * self._transition_loss(out, gold)
            output["loss"] = loss
        return output

    def _transition_loss(self, out: SpinnOutput, gold: torch.Tensor) -> torch.Tensor:
        steps = out.transition_logits.size(1)
        gold = gold[:, :steps].long()
        valid = gold != PAD
        loss = nn.functional.cross_entropy(out.transition_logits[valid], gold[valid])
        self._update_parse_metrics(out, gold, valid)
        return loss

    @torch.no_grad()
    def _update_parse_metrics(self, out: SpinnOutput, gold: torch.Tensor,
                              valid: torch.Tensor) -> None:
        # What the parser would do: the transitions it followed when it followed its own,
        # its argmax when it was teacher-forced with the gold ones.
        predicted = (out.transitions[:, : gold.size(1)] if out.mode != GIVEN
                     else out.transition_logits.argmax(dim=-1))
        correct = (predicted == gold) & valid
        self._transition_accuracy(int(correct.sum()), int(valid.sum()))
        same_tree = (correct == valid).all(dim=1)
        self._tree_accuracy(int(same_tree.sum()), same_tree.numel())
        num_words = (gold == SHIFT).sum(dim=1).tolist()
        valid_trees = sum(is_valid(row[row_valid].tolist(), n)
                          for row, row_valid, n in zip(predicted, valid, num_words))
        self._valid_tree_rate(valid_trees, len(num_words))

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        labels = self.vocab.get_index_to_token_vocabulary(self._label_namespace)
        output_dict["label"] = [labels[int(i)] for i in output_dict["probs"].argmax(dim=-1)]
        output_dict["label_probs"] = [
            {labels[i]: float(prob) for i, prob in enumerate(row)} for row in output_dict["probs"]
        ]
        for name in ("premise", "hypothesis"):
            key = f"{name}_transitions"
            if key not in output_dict or "metadata" not in output_dict:
                continue
            trees = []
            for row, meta in zip(output_dict[key], output_dict["metadata"]):
                tokens = meta[f"{name}_tokens"]
                sequence = [int(t) for t in row if int(t) != PAD]
                # The paper's left padding (crop_pad_length) puts one SHIFT per pad token under
                # the sentence's tree: show the sentence's own tree. (A parser following its
                # own predictions may have merged pads into it: then show the whole tree.)
                num_pad = len(tokens) - len(list(dropwhile(lambda t: t == LEFT_PAD_TOKEN, tokens)))
                if num_pad and is_valid(sequence[num_pad:], len(tokens) - num_pad):
                    tokens, sequence = tokens[num_pad:], sequence[num_pad:]
                trees.append(transitions_to_string(tokens, sequence) if tokens else "")
            output_dict[f"{name}_tree"] = trees
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"accuracy": self._accuracy.get_metric(reset)}
        if self._has_parser:
            metrics["transition_accuracy"] = self._transition_accuracy.get_metric(reset)
            metrics["tree_accuracy"] = self._tree_accuracy.get_metric(reset)
            metrics["valid_tree_rate"] = self._valid_tree_rate.get_metric(reset)
        return metrics

    default_predictor = "spinn_nli"


def _source(out: SpinnOutput, gold: Optional[torch.Tensor]) -> str:
    """Which tree the encoder composed over, for the human-readable output."""
    if out.mode != GIVEN:
        return out.mode  # "predicted" by its own parser, or "mixed"
    return "gold" if gold is not None else "balanced default tree"


class Share(Metric):
    """Hits over trials, summed over batches (and over workers in distributed training).

    One call per batch: AllenNLP's ``Average`` all-reduces on every call, so calling it per
    sentence made workers with different batch sizes issue different collectives (a gloo
    "collective mismatch" crash in 2-worker training)."""

    def __init__(self) -> None:
        self._hits = 0
        self._trials = 0

    def __call__(self, hits: int, trials: int) -> None:  # type: ignore[override]
        self._hits += dist_reduce_sum(hits)
        self._trials += dist_reduce_sum(trials)

    def get_metric(self, reset: bool = False) -> float:
        value = self._hits / self._trials if self._trials else 0.0
        if reset:
            self.reset()
        return float(value)

    def reset(self) -> None:
        self._hits = 0
        self._trials = 0
