from typing import Any, Dict, List, Optional

import torch
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, TextFieldEmbedder
from allennlp.modules.matrix_attention import MatrixAttention
from allennlp.nn import InitializerApplicator

from spinn_allennlp.core.batching import concat_padded
from spinn_allennlp.core.transitions import PAD
from spinn_allennlp.data.dataset_readers import LEFT_PAD_TOKEN
from spinn_allennlp.data.trees import readable_tree
from spinn_allennlp.modules.tree_node_encoder import TreeNodeEncoder, TreeNodes
from spinn_allennlp.pair_classification.models.enhanced_inference import (
    Composition,
    Encoding,
    EnhancedInferenceModel,
    Side,
)


@Model.register("tree_esim_nli")
class TreeEsimNli(EnhancedInferenceModel):
    """The syntactic tree-LSTM inference model of Chen et al. (2017, "syn.tree", the tree half
    of HIM): ESIM's architecture with tree-LSTMs in both the input encoding and the inference
    composition.

    Input encoding: a `TreeNodeEncoder` over each sentence's binary tree gives every node's
    state (leaves take their words, constituents a learned "no word" vector; eq. 3-10).
    Attention runs over all premise x hypothesis node pairs (§3.2: "we treat all tree nodes
    equally"), the enhanced vectors of every node are projected by `F`, and a second
    `TreeNodeEncoder` over the same trees composes them, every node taking its own vector
    (eq. 16-17). Pooling is average and max over the nodes plus the two roots' states (§3.3).

    The trees are the transitions the reader gives (gold binary parses, or a tree source's
    trees for raw text); without any, the encoder's balanced tree.

    Registered as a `Model` with name "tree_esim_nli".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `TreeNodeEncoder`
        The input encoding.
    projection_feedforward : `FeedForward`
        `F`, from 4 x `encoder`'s output size to `inference_encoder`'s input size.
    inference_encoder : `TreeNodeEncoder`
        The inference composition, over the same trees; called with node inputs only, so its
        `learned_constituent_input` should be false.
    output_feedforward : `FeedForward`
        The MLP on the pooled vector (input 6 x `inference_encoder`'s output size).
    similarity : `MatrixAttention`, optional (default = `DotProductMatrixAttention()`)
    dropout : `float`, optional (default = `0.5`)
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional (default = `None`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: TreeNodeEncoder,
        projection_feedforward: FeedForward,
        inference_encoder: TreeNodeEncoder,
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
            6 * inference_encoder.get_output_dim(),
        )
        self._initialize()

    def _encode_inputs(self, sides: List[Side]) -> List[Encoding]:
        # Premises and hypotheses through the encoder in one call: one pass over the levels of
        # the taller tree instead of one per side, each level a single larger composition.
        sizes = [embedded.size(0) for embedded, _, _ in sides]
        embedded = concat_padded([embedded for embedded, _, _ in sides], 0.0)
        mask = concat_padded([mask for _, mask, _ in sides], False)
        given = [transitions for _, _, transitions in sides if transitions is not None]
        transitions: Optional[torch.Tensor] = None  # none: the balanced tree for every sentence
        if len(given) == len(sides):
            transitions = concat_padded(given, PAD)
        elif given:
            raise ValueError("give transitions for both premise and hypothesis, or for neither")
        nodes = self._encoder(embedded, mask, transitions).split(sizes)
        # Shape: (batch_size, num_nodes, encoder_dim) each.
        return [(side.states, side.mask, side) for side in nodes]

    def _compose(
        self, projected: List[torch.Tensor], encodings: List[Encoding]
    ) -> List[Composition]:
        trees: List[TreeNodes] = [encoding[2] for encoding in encodings]
        nodes = self._inference_encoder.encode_node_inputs(
            concat_padded(projected, 0.0), concat_padded([t.transitions for t in trees], PAD)
        ).split([side.size(0) for side in projected])
        # Shape: (batch_size, num_nodes, inference_dim); roots (batch_size, inference_dim).
        return [(side.states, side.mask, [side.roots]) for side in nodes]

    def _add_to_output(self, output: Dict[str, Any], encodings: List[Encoding]) -> None:
        for name, (_, _, nodes) in zip(("premise", "hypothesis"), encodings):
            output[f"{name}_transitions"] = nodes.transitions

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        return add_readable_trees(super().make_output_human_readable(output_dict))


def add_readable_trees(output_dict: Dict[str, Any]) -> Dict[str, Any]:
    """Adds `premise_tree`/`hypothesis_tree` (bracketed) and `*_transitions_source` from the
    output's `*_transitions` and `metadata` (when there is metadata)."""
    if "metadata" in output_dict:
        for name in ("premise", "hypothesis"):
            transitions = output_dict[f"{name}_transitions"].cpu()
            metadata = output_dict["metadata"]
            output_dict[f"{name}_tree"] = [
                readable_tree(meta[f"{name}_tokens"], row.tolist(), LEFT_PAD_TOKEN)
                for row, meta in zip(transitions, metadata)
            ]
            output_dict[f"{name}_transitions_source"] = [
                transitions_source(meta, name) for meta in metadata
            ]
    return output_dict


def transitions_source(metadata: Dict[str, Any], side: str) -> str:
    """Which tree a side was composed over: the reader's source ("gold", a tree source's name)
    or, when the reader gave none, the encoder's balanced default tree."""
    source = metadata.get(f"{side}_transitions_source", metadata.get("transitions_source"))
    return "balanced default tree" if source in (None, "none") else str(source)
