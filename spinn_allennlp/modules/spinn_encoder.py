from typing import Optional

import torch
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.core.output import GIVEN, MIXED, PREDICTED, SpinnOutput
from spinn_allennlp.core.spinn import Spinn
from spinn_allennlp.modules.tree_encoder import TreeEncoder


@Seq2VecEncoder.register("spinn")
class SpinnEncoder(TreeEncoder):
    """SPINN (Bowman et al. 2016): encodes a sentence by shift-reduce TreeLSTM composition over a
    binary tree, with a thin stack batched over sentences.

    Which tree: the `transitions` passed to `forward`/`encode` (gold parses from a reader such as
    `snli_transitions`); with `predict_transitions`, the encoder's own parser when no
    transitions are given, and at evaluation time unless `parse_at_test_time` is false; with
    neither, the balanced binary tree over the words. So `"type": "spinn"` also works in
    configs that know nothing of trees (`basic_classifier`).

    The paper's variants (Table 3): `tracking_dim = 0` is SPINN-PI-NT (exactly a TreeLSTM);
    `tracking_dim > 0` is SPINN-PI; adding `predict_transitions = true` gives the full SPINN.

    Input shape: (batch_size, num_tokens, input_dim) with a mask of real tokens first;
    output shape: (batch_size, hidden_dim). `encode` returns the whole `SpinnOutput`.

    Registered as a `Seq2VecEncoder` with name "spinn".

    # Parameters

    input_dim : `int`
        Size of the word vectors.
    hidden_dim : `int`
        D, the size of a tree node's h (and c): the output size.
    tracking_dim : `int`, optional (default = `0`)
        Size of the tracking LSTM (§3.3); 0 for none.
    predict_transitions : `bool`, optional (default = `False`)
        A transition classifier on the tracker's state (eq. 5); needs `tracking_dim > 0`.
        The model must train it with the transition loss (see `spinn_nli`).
    parse_at_test_time : `bool`, optional (default = `True`)
        With a parser: follow its own parse at evaluation even when gold transitions are given.
    self_transition_prob : `float`, optional (default = `0.0`)
        With a parser, in training: the chance per step of following its own prediction instead
        of the gold transition (NSHRDLU Model 2).
    composition : `str`, optional (default = `"treelstm"`)
        `"treelstm"` (eq. 1-3) or `"treernn"` (the blog post's tanh layer).
    projection_dropout : `float`, optional (default = `0.0`)
        Drop rate on the projected words (eq. 4).
    projection_batch_norm : `bool`, optional (default = `False`)
        Batch normalisation of the projected words, over real tokens only.
    levelwise : `bool`, optional (default = `True`)
        SPINN-PI-NT with given transitions: compose one tree level at a time, batch-wide
        (same function, fewer and larger calls).
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
    def has_parser(self) -> bool:
        return self.spinn.predict_transitions

    @property
    def predict_transitions(self) -> bool:
        return self.spinn.predict_transitions

    def get_input_dim(self) -> int:
        return self.spinn.input_dim

    def get_output_dim(self) -> int:
        return self.spinn.hidden_dim

    def transition_mode(self, has_transitions: bool) -> str:
        """Which transitions `encode` follows, given whether gold ones were passed."""
        if not self.predict_transitions:
            return GIVEN  # gold, or the balanced default tree
        if not has_transitions:
            return PREDICTED
        if self.training:
            return MIXED if self.self_transition_prob > 0 else GIVEN
        return PREDICTED if self.parse_at_test_time else GIVEN

    def encode(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
    ) -> SpinnOutput:
        return self.spinn(
            inputs,
            mask,
            transitions,
            mode=self.transition_mode(transitions is not None),
            self_transition_prob=self.self_transition_prob,
            return_nodes=return_nodes,
        )
