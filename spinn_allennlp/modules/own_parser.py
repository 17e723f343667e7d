import dataclasses
from typing import Optional, Tuple, Union

import torch
from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from spinn_core.graphs import GraphedSpinn
from spinn_core.output import PARSER_FIELDS, SpinnOutput
from spinn_core.parser_network import ParserNetwork
from spinn_core.policies import Given, TransitionPolicy
from spinn_core.rules import check_beam_mixture_nodes, check_parser_vocabulary
from spinn_core.spinn import Spinn


class OwnParser(FromParams):
    """The `"parser"` block of a `spinn` encoder: a parser with a network of its own
    (`spinn_core.parser_network.ParserNetwork`; Havrylov et al. 2019's disjoint syntax and
    semantics, in SPINN form). The encoder's own layers are then the task's composition alone
    (SPINN-PI-NT with `tracking_dim: 0`, composed level by level over the parser's trees),
    and the parser chooses every tree the encoder has to choose (what `predict_transitions`
    would otherwise do). Nothing passes between the two but the trees.

    A config that trains such a parser from the task alone:
    `training_config/classification/listops_own_parser_best_draw.jsonnet`.

    # Parameters

    hidden_dim : `int`
        The size of the parser's leaf LSTM and of its TreeLSTM's nodes.
    tracking_dim : `int`
        The size of its tracking LSTM, whose state scores SHIFT and REDUCE.
    embedding_dim : `int`, optional (default = `0`)
        With a size, the parser embeds the words itself (its own embeddings, over the
        vocabulary's `vocab_namespace`; the models `spinn_classifier` and `spinn_nli` hand it
        the token ids). 0 reads the model's word vectors instead, detached: no gradient goes
        back, but their values are the task's (what a model that passes no token ids gets).
    vocab_namespace : `str`, optional (default = `"tokens"`)
        The namespace of the token ids the parser embeds.
    leaf_lstm : `bool`, optional (default = `True`)
        A forward LSTM over the words before the stack (Havrylov et al.'s parser leaves).
    """

    def __init__(
        self,
        hidden_dim: int,
        tracking_dim: int,
        embedding_dim: int = 0,
        vocab_namespace: str = "tokens",
        leaf_lstm: bool = True,
    ) -> None:
        if hidden_dim < 1 or tracking_dim < 1 or embedding_dim < 0:
            raise ConfigurationError(
                "parser: hidden_dim and tracking_dim must be positive and embedding_dim "
                f"at least 0, got {hidden_dim}, {tracking_dim}, {embedding_dim}"
            )
        self.hidden_dim = hidden_dim
        self.tracking_dim = tracking_dim
        self.embedding_dim = embedding_dim
        self.vocab_namespace = vocab_namespace
        self.leaf_lstm = leaf_lstm


def parser_network(
    settings: OwnParser, input_dim: int, vocab: Optional[Vocabulary]
) -> ParserNetwork:
    """The `parser` block's network: its own embeddings over the vocabulary's namespace (with
    `embedding_dim`), else reading the encoder's `input_dim` word vectors."""
    num_embeddings = 0
    check_parser_vocabulary(settings.embedding_dim, has_vocab=vocab is not None)
    if settings.embedding_dim and vocab is not None:
        num_embeddings = vocab.get_vocab_size(settings.vocab_namespace)
    return ParserNetwork(
        input_dim=settings.embedding_dim or input_dim,
        hidden_dim=settings.hidden_dim,
        tracking_dim=settings.tracking_dim,
        num_embeddings=num_embeddings,
        leaf_lstm=settings.leaf_lstm,
    )


def parse_then_compose(
    parser: Tuple[ParserNetwork, Optional[GraphedSpinn]],
    composition: Union[Spinn, GraphedSpinn],
    inputs: torch.Tensor,
    mask: torch.Tensor,
    transitions: Optional[torch.Tensor],
    return_nodes: bool,
    policy: TransitionPolicy,
    parser_tokens: Optional[torch.Tensor],
) -> SpinnOutput:
    """A pass of an encoder with a parser of its own: the parser runs `policy` on its own
    inputs, then the composition follows the transitions it took as given trees. The output is
    the composition's, with the parser's scores of its moves. `parser`: the parser's network
    and its SPINN replayed from CUDA graphs (or None: that SPINN as it is); `composition`: the
    encoder's core, or that core replayed from CUDA graphs."""
    network, graphed = parser
    words = parser_tokens if network.reads_token_ids else inputs.detach()
    parsed = network(words, mask, transitions, policy, core=graphed)
    if policy.mixes:
        return _compose_beam(composition, inputs, mask, parsed, return_nodes)
    if policy.rescores_only:
        # PPO's further updates read the parser's scores of moves already taken, not the
        # sentence vectors: the composition is not run.
        composed = SpinnOutput(
            inputs.new_zeros(inputs.size(0), composition.hidden_dim), parsed.transitions
        )
    else:
        composed = composition(
            inputs, mask, parsed.transitions, return_nodes=return_nodes, policy=Given()
        )
    parser_record = {name: getattr(parsed, name) for name in PARSER_FIELDS}
    return dataclasses.replace(composed, mode=parsed.mode, **parser_record)


def _compose_beam(
    composition: Union[Spinn, GraphedSpinn],
    inputs: torch.Tensor,
    mask: torch.Tensor,
    parsed: SpinnOutput,
    return_nodes: bool,
) -> SpinnOutput:
    """A beam mixture with a parser of its own: the composition follows each of the beam's K
    trees of every sentence, and the sentence vector is their roots weighted by the softmax of
    the parser's scores of them (``spinn_core/runners/beam.py``), so the task's gradient
    reaches the parser through the scores alone."""
    check_beam_mixture_nodes(return_nodes)
    assert parsed.beam_scores is not None and parsed.beam_transitions is not None
    batch_size, width = parsed.beam_scores.shape
    roots = composition(
        inputs.repeat_interleave(width, dim=0),
        mask.repeat_interleave(width, dim=0),
        parsed.beam_transitions.flatten(0, 1),
        policy=Given(),
    ).sentence.view(batch_size, width, -1)
    weights = torch.softmax(parsed.beam_scores, dim=1).to(roots.dtype)
    return dataclasses.replace(
        parsed,
        sentence=(weights.unsqueeze(2) * roots).sum(dim=1),
        beam_roots=roots if parsed.beam_roots is not None else None,
    )
