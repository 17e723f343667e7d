"""SPINN as an AllenNLP ``Seq2VecEncoder`` registered as ``"spinn"``."""
from typing import Optional

import torch
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.core.spinn import GIVEN, MIXED, PREDICTED, Spinn, SpinnOutput


@Seq2VecEncoder.register("spinn")
class SpinnEncoder(Seq2VecEncoder):
    """Encodes a sentence by shift-reduce TreeLSTM composition over a binary tree.

    Which tree: the ``transitions`` passed to ``forward`` (gold parses from a reader such as
    ``snli_transitions``); with ``predict_transitions``, the encoder's own parser when no
    transitions are given, and at evaluation time unless ``parse_at_test_time`` is false; with
    neither, the balanced binary tree over the words. So ``"type": "spinn"`` also works in
    configs that know nothing of trees (``basic_classifier``).

    Paper variants (Bowman et al. 2016, Table 3): ``tracking_dim=0`` is SPINN-PI-NT (a plain
    TreeLSTM); ``tracking_dim>0`` is SPINN-PI; adding ``predict_transitions=true`` gives the
    full SPINN. ``levelwise`` (default true) composes SPINN-PI-NT with given transitions one
    tree level at a time, batch-wide, instead of step by step. ``self_transition_prob`` > 0 makes training follow the model's own predicted
    transition at each step with that probability (NSHRDLU Model 2).

    ``forward`` returns the sentence vector; ``encode`` returns the full
    :class:`~spinn_allennlp.core.spinn.SpinnOutput` (transition logits, the transitions
    followed, and on request every tree node's state).
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        tracking_dim: int = 0,
        predict_transitions: bool = False,
        parse_at_test_time: bool = True,
        self_transition_prob: float = 0.0,
        composition: str = "treelstm",
        projection_dropout: float = 0.0,
        projection_batch_norm: bool = False,
        levelwise: bool = True,
    ) -> None:
        super().__init__()
        if not 0.0 <= self_transition_prob <= 1.0:
            raise ValueError("self_transition_prob must be in [0, 1]")
        if self_transition_prob > 0 and not predict_transitions:
            raise ValueError("self_transition_prob needs predict_transitions=true")
        self.spinn = Spinn(
            input_dim=input_dim,
            hidden_dim=hidden_dim,
            tracking_dim=tracking_dim,
            predict_transitions=predict_transitions,
            composition=composition,
            projection_dropout=projection_dropout,
            projection_batch_norm=projection_batch_norm,
            levelwise=levelwise,
        )
        self.parse_at_test_time = parse_at_test_time
        self.self_transition_prob = self_transition_prob

    @property
    def predict_transitions(self) -> bool:
        return self.spinn.predict_transitions

    def get_input_dim(self) -> int:
        return self.spinn.input_dim

    def get_output_dim(self) -> int:
        return self.spinn.hidden_dim

    def transition_mode(self, has_transitions: bool) -> str:
        """Which transitions ``encode`` follows, given whether gold ones were passed."""
        if not self.predict_transitions:
            return GIVEN  # gold, or the balanced default tree
        if not has_transitions:
            return PREDICTED
        if self.training:
            return MIXED if self.self_transition_prob > 0 else GIVEN
        return PREDICTED if self.parse_at_test_time else GIVEN

    def encode(self, inputs: torch.Tensor, mask: torch.Tensor,
               transitions: Optional[torch.Tensor] = None,
               return_nodes: bool = False) -> SpinnOutput:
        return self.spinn(
            inputs,
            mask,
            transitions,
            mode=self.transition_mode(transitions is not None),
            self_transition_prob=self.self_transition_prob,
            return_nodes=return_nodes,
        )

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor,
                transitions: Optional[torch.Tensor] = None) -> torch.Tensor:
        return self.encode(inputs, mask, transitions).sentence
