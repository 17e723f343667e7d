from typing import Any, Dict, List

import torch
from allennlp.models import Model

from spinn_allennlp.modules.sentence_batches import stack_batches
from spinn_allennlp.modules.tree_encoder import transitions_source
from spinn_allennlp.modules.tree_node_encoder import TreeNodeEncoder, TreeNodes
from spinn_allennlp.pair_classification.models.enhanced_inference import (
    Composition,
    Encoding,
    EnhancedInferenceModel,
    Side,
)
from spinn_allennlp.pair_classification.models.readable_output import add_readable_trees
from spinn_core.output import GIVEN


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

    encoder : `TreeNodeEncoder`
        The input encoding.
    inference_encoder : `TreeNodeEncoder`
        The inference composition, over the same trees; called with node inputs only, so its
        `learned_constituent_input` should be false. `output_feedforward` takes 6 x its output
        size.
    **kwargs
        The other parameters of `EnhancedInferenceModel`.
    """

    pooled_vectors = 6  # average and max of each side's nodes, and the two roots' states

    _encoder: TreeNodeEncoder
    _inference_encoder: TreeNodeEncoder

    def __init__(
        self, encoder: TreeNodeEncoder, inference_encoder: TreeNodeEncoder, **kwargs
    ) -> None:
        super().__init__(encoder=encoder, inference_encoder=inference_encoder, **kwargs)

    def _encode_inputs(self, sides: List[Side]) -> List[Encoding]:
        # Premises and hypotheses through the encoder in one call: one pass over the levels of
        # the taller tree instead of one per side, each level a single larger composition.
        # Without transitions: the balanced tree for every sentence.
        stacked = stack_batches(sides)
        nodes = self._encoder(stacked.inputs, stacked.mask, stacked.transitions)
        # Shape: (batch_size, num_nodes, encoder_dim) each.
        return [(side.states, side.mask, side) for side in nodes.split(stacked.sizes)]

    def _compose(
        self, projected: List[torch.Tensor], encodings: List[Encoding]
    ) -> List[Composition]:
        # Every node takes its own projected vector, over the same trees, again in one call.
        trees: List[TreeNodes] = [encoding[2] for encoding in encodings]
        stacked = stack_batches(
            [(side, tree.mask, tree.transitions) for side, tree in zip(projected, trees)]
        )
        assert stacked.transitions is not None  # the trees the input encoding followed
        nodes = self._inference_encoder.encode_node_inputs(stacked.inputs, stacked.transitions)
        # Shape: (batch_size, num_nodes, inference_dim); roots (batch_size, inference_dim).
        return [(side.states, side.mask, [side.roots]) for side in nodes.split(stacked.sizes)]

    def _add_to_output(
        self, output: Dict[str, Any], sides: List[Side], encodings: List[Encoding]
    ) -> None:
        metadata = output.get("metadata")
        for name, (_, _, given), (_, _, nodes) in zip(("premise", "hypothesis"), sides, encodings):
            output[f"{name}_transitions"] = nodes.transitions
            output[f"{name}_transitions_source"] = transitions_source(
                GIVEN, given is not None, metadata, nodes.transitions.size(0)
            )

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        return add_readable_trees(super().make_output_human_readable(output_dict))
