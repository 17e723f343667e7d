from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError


class OwnParser(FromParams):
    """The `"parser"` block of a `spinn` encoder: a parser with a network of its own
    (`core.parser_network.ParserNetwork`; Havrylov et al. 2019's disjoint syntax and
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
