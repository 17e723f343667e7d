"""The interface models use to ask a sentence encoder for its tree, and the one way they call
any `Seq2VecEncoder`: `encode` (one sentence batch) and `encode_together` (several, e.g.
premises and hypotheses, in one call), whose results say which tree each sentence was composed
over in one vocabulary (`transitions_source`); first, the checks where word vectors meet an
encoder (`word_mask`, `check_embedder_feeds_encoder`)."""

import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, overload

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.modules.seq2vec_encoders import (
    BagOfEmbeddingsEncoder,
    CnnEncoder,
    CnnHighwayEncoder,
    PytorchSeq2VecWrapper,
)

from spinn_allennlp.modules.dependency_tree_encoder import DependencyTreeEncoder
from spinn_allennlp.modules.padded_lstm import PaddedLstmSeq2VecEncoder
from spinn_core.batch import concat_padded, default_transitions
from spinn_core.child_sum import DependencyOutput
from spinn_core.output import GIVEN, Mode, SpinnOutput
from spinn_core.policies import Given, TransitionPolicy
from spinn_core.supervision import attach_loss
from spinn_core.transitions import PAD

# ----------------------------------------------------------------------------------------------
# Where word vectors meet a sentence encoder: the checks that say which setting to change when
# their sizes differ (at a model's construction, and at an encoder's first batch for models that
# never compare them, such as AllenNLP's `basic_classifier`) or their dtype is not the encoder's,
# and AllenNLP's `mask=None`.
# ----------------------------------------------------------------------------------------------


def input_size_setting(encoder: Seq2VecEncoder) -> str:
    """The name of the setting that gives `encoder` its input size, as a config spells it."""
    if isinstance(encoder, (PytorchSeq2VecWrapper, PaddedLstmSeq2VecEncoder)):  # "lstm", ...
        return "input_size"
    if isinstance(encoder, (BagOfEmbeddingsEncoder, CnnEncoder, CnnHighwayEncoder)):
        return "embedding_dim"
    return "input_dim"  # ours ("spinn", "child_sum_tree_lstm") and most others


def check_embedder_feeds_encoder(
    embedder: TextFieldEmbedder, encoder: Seq2VecEncoder, name: str = "encoder"
) -> None:
    """Raises `ConfigurationError` naming the setting to change unless `embedder`'s output size
    is `encoder`'s input size (`name`: the model's parameter that holds the encoder)."""
    embedding_dim, input_dim = embedder.get_output_dim(), encoder.get_input_dim()
    if embedding_dim != input_dim:
        setting = input_size_setting(encoder)
        raise ConfigurationError(
            f"the text_field_embedder gives word vectors of size {embedding_dim}, but the "
            f"{name}'s {setting} is {input_dim}: set {name}.{setting} to {embedding_dim} (or "
            f"change the embedder's size to {input_dim})"
        )


def word_mask(
    encoder: Seq2VecEncoder, inputs: torch.Tensor, mask: Optional[torch.Tensor]
) -> torch.Tensor:
    """The mask an encoder's `forward` got, or, for `None`, every position a word (as
    AllenNLP's own `Seq2VecEncoder`s read it); raises `ConfigurationError` naming the setting to
    change when the word vectors' size is not the encoder's input size."""
    if inputs.dim() == 3 and inputs.size(-1) != encoder.get_input_dim():
        setting = input_size_setting(encoder)
        raise ConfigurationError(
            f"{type(encoder).__name__} got word vectors of size {inputs.size(-1)}, but its "
            f"{setting} is {encoder.get_input_dim()}: set the encoder's {setting} to the output "
            f"size of the embedder that feeds it ({inputs.size(-1)})"
        )
    check_word_vector_dtype(encoder, inputs)
    if mask is None:
        return torch.ones(inputs.shape[:-1], dtype=torch.bool, device=inputs.device)
    return mask


def check_word_vector_dtype(encoder: Seq2VecEncoder, inputs: torch.Tensor) -> None:
    """Raises `ValueError` saying what to do when the word vectors are not floating point, or
    not of the encoder's parameters' dtype outside autocast (torch's own message, "mat1 and
    mat2 must have the same dtype", names neither the encoder nor a remedy)."""
    name = type(encoder).__name__
    if not inputs.is_floating_point():
        raise ValueError(
            f"{name} got word vectors of dtype {inputs.dtype}: it takes floating-point vectors "
            "(token ids go through an embedder first)"
        )
    parameter = next(encoder.parameters(), None)
    if parameter is None or inputs.dtype == parameter.dtype:
        return
    if torch.is_autocast_enabled(inputs.device.type):
        return  # autocast casts both sides of each product
    raise ValueError(
        f"{name} got word vectors of dtype {inputs.dtype}, but its parameters are "
        f"{parameter.dtype}: convert one to the other (inputs.to({parameter.dtype}) or "
        f"encoder.to({inputs.dtype})) or run under torch.autocast; for bf16 inside the "
        'encoder, set its mixed_precision to "bf16"'
    )


logger = logging.getLogger(__name__)

# One batch of sentences for an encoder: inputs (B, N, input_dim), mask (B, N) and, for a tree
# encoder, transitions (B, T) or None.
SentenceBatch = Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]

# Which tree a sentence was composed over: a model's `transitions_source` (or
# `premise_transitions_source`, ...) output, one value per sentence, in one vocabulary:
# * the encoder's own choice: its mode, `"predicted"`, `"mixed"` or `"soft"` (core.output);
# * the reader's transitions: `GOLD` (the corpus's parses), or the name of the tree source that
#   made them (`"benepar"`, `"balanced"`, `"right_branching"`, ...), as the reader's metadata
#   says under one of `SOURCE_METADATA_KEYS`;
# * `DEFAULT_TREE`: no transitions given and none chosen: the encoder's balanced tree.
GOLD = "gold"
DEFAULT_TREE = "balanced default tree"
# Where readers name the source of the transitions they give (the SNLI reader says "none" when
# it has no tree source; the SST and SICK readers say "tree_source").
SOURCE_METADATA_KEYS = ("transitions_source", "tree_source")
NO_SOURCE = "none"


def transitions_source(
    mode: str,
    given: bool,
    metadata: Optional[Sequence[Mapping[str, Any]]],
    batch_size: int,
    has_parser: bool = False,
) -> List[str]:
    """Which tree an encoder composed over, for each sentence of a batch (the vocabulary
    above): its own choice when its `mode` is not `"given"`; else, when transitions were
    `given`, the source the reader's `metadata` (one per sentence) names, `GOLD` where it
    names none; else `DEFAULT_TREE`. A sentence whose metadata says it got no tree (`"none"`,
    a line without a parse next to lines with one) is the encoder's choice: `"predicted"`
    for an encoder with a parser (`has_parser`), `DEFAULT_TREE` otherwise."""
    if mode != GIVEN:
        # A plain string, as every other source (a Mode is a str subclass; JSON and `==`
        # never told them apart, a Python user's `type()` did).
        return [str(mode)] * batch_size
    own = Mode.PREDICTED.value if has_parser else DEFAULT_TREE
    if not given:
        return [DEFAULT_TREE] * batch_size
    return [_named_source(meta, own) for meta in metadata or [{}] * batch_size]


def _named_source(metadata: Mapping[str, Any], own: str) -> str:
    for key in SOURCE_METADATA_KEYS:
        source = metadata.get(key)
        if source == NO_SOURCE and key == "transitions_source":
            return own
        if source is not None and source != NO_SOURCE:
            return str(source)
    return GOLD


class TreeEncoder(Seq2VecEncoder):
    """A `Seq2VecEncoder` that composes over a binary tree and reports it.

    `forward(inputs, mask, transitions=None)` returns the sentence vector like any
    `Seq2VecEncoder`, so a tree encoder drops into any AllenNLP model. A model that knows about
    trees calls `encode` instead and gets a `SpinnOutput`: the sentence vector, the transitions
    followed (gold, the default tree, or the encoder's own parse), the parser's logits when
    `has_parser`, and on request every node's state. Models reach it through the module's
    `encode` (and `has_parser`, ...), which work for any `Seq2VecEncoder`, never by testing
    for a class.

    `transitions`: shape (batch_size, steps), SHIFT = 0 / REDUCE = 1 / PAD = -1, at most
    `2 * num_words - 1` steps per sentence; `mask`: (batch_size, num_tokens), real tokens first;
    `reduce_types` (encoders with typed REDUCE): shape (batch_size, steps), the type of each
    given REDUCE, -1 elsewhere.

    A sentence whose row of `transitions` has no step (all PAD) has no tree given: readers give
    sentences without a parse (and without a tree source) an empty transitions field, so that
    lines with and without parses can share a batch. The encoder decides its tree as if no
    transitions had been given (see `given_trees`, `rows_without_trees`).
    """

    @property
    def has_parser(self) -> bool:
        """Whether the encoder predicts transitions (and returns their logits)."""
        return False

    @property
    def num_reduce_types(self) -> int:
        """The number of REDUCE types of a typed-REDUCE encoder; 0 for untyped REDUCE."""
        return 0

    def encode(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        transitions: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
        reduce_types: Optional[torch.Tensor] = None,
        policy: Optional[TransitionPolicy] = None,
        parser_tokens: Optional[torch.Tensor] = None,
    ) -> SpinnOutput:
        """`policy` (`core.policies`), when given, decides the transitions instead of the
        encoder's own choice (e.g. a sampling policy while a latent parser trains).
        `parser_tokens`: (batch_size, num_tokens) token ids, for a parser that embeds words
        itself (`parser_reads_token_ids`)."""
        raise NotImplementedError

    @property
    def parser_reads_token_ids(self) -> bool:
        """Whether `encode` needs `parser_tokens`: a parser with embeddings of its own."""
        return False

    def forward(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        transitions: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        return self.encode(inputs, mask, transitions).sentence


class AddedLosses:
    """The terms an encoder adds to the loss of its sentence vectors in training (its own
    weighted transition loss, the soft stack's strength entropy), kept so that a model reports
    them: `encoder_loss_metrics` gives each term's mean per training batch since the last
    reset, as the metric `encoder_NAME` (the models spinn_classifier and spinn_nli report it;
    what `attach_loss` adds is otherwise invisible in the trainer's loss)."""

    def __init__(self) -> None:
        # name -> (running total as a float64 tensor, batches)
        self._totals: Dict[str, Tuple[torch.Tensor, int]] = {}

    def attach(self, name: str, sentence: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
        """`sentence`, whose backward pass adds `loss`'s gradient (`attach_loss`); `loss`
        counted under `name`."""
        total, batches = self._totals.get(name, (0.0, 0))
        self._totals[name] = (total + loss.detach().double(), batches + 1)
        return attach_loss(sentence, loss)

    def get_metric(self, reset: bool) -> Dict[str, float]:
        metrics = {
            f"encoder_{name}": float(total) / batches
            for name, (total, batches) in self._totals.items()
        }
        if reset:
            self._totals = {}
        return metrics


def encoder_loss_metrics(encoder: Seq2VecEncoder, reset: bool) -> Dict[str, float]:
    """The losses `encoder` added in training (`AddedLosses`); none for other encoders."""
    added = getattr(encoder, "added_losses", None)
    return added.get_metric(reset) if isinstance(added, AddedLosses) else {}


@dataclass
class EncodedSentences:
    """One sentence batch encoded, as a model sees it whatever the encoder: the sentence
    vectors, shape (batch_size, output_dim), and what a tree encoder says besides: a
    `TreeEncoder`'s whole `SpinnOutput` (`tree`: the transitions it followed and how it chose
    them, its parser's logits, on request every node's state), a `DependencyTreeEncoder`'s
    `DependencyOutput` (`dependency`: the heads, the words' states)."""

    sentence: torch.Tensor
    tree: Optional[SpinnOutput] = None
    dependency: Optional[DependencyOutput] = None

    @property
    def node_hidden(self) -> Optional[torch.Tensor]:
        """Shape (batch_size, num_nodes, output_dim): every node's h, when asked for and the
        encoder has nodes (a binary tree's, one per step; a dependency tree's, one per word)."""
        if self.tree is not None:
            return self.tree.node_hidden
        return self.dependency.node_hidden if self.dependency is not None else None


def encode(
    encoder: Seq2VecEncoder,
    inputs: torch.Tensor,
    mask: torch.Tensor,
    transitions: Optional[torch.Tensor] = None,
    heads: Optional[torch.Tensor] = None,
    reduce_types: Optional[torch.Tensor] = None,
    return_nodes: bool = False,
    policy: Optional[TransitionPolicy] = None,
    parser_tokens: Optional[torch.Tensor] = None,
) -> EncodedSentences:
    """Encodes one sentence batch with any `Seq2VecEncoder`, giving a tree encoder the tree it
    takes: `transitions` (and `reduce_types`) to a `TreeEncoder`, `heads` to a
    `DependencyTreeEncoder`; any other encoder reads the words alone. Models call this instead
    of testing the encoder's class. `policy` goes to a tree encoder with a parser (see
    `TreeEncoder.encode`), `parser_tokens` (the words' token ids) to one whose parser embeds
    them itself."""
    if isinstance(encoder, TreeEncoder):
        tree = encoder.encode(
            inputs,
            mask,
            transitions,
            return_nodes=return_nodes,
            reduce_types=reduce_types,
            policy=policy if encoder.has_parser else None,
            parser_tokens=parser_tokens if encoder.parser_reads_token_ids else None,
        )
        return EncodedSentences(tree.sentence, tree=tree)
    if isinstance(encoder, DependencyTreeEncoder):
        dependency = encoder.encode(inputs, mask, heads, return_nodes=return_nodes)
        return EncodedSentences(dependency.sentence, dependency=dependency)
    return EncodedSentences(encoder(inputs, mask))


def check_parser_training(
    model: str,
    encoder: Seq2VecEncoder,
    transition_loss_weight: float,
    policy_gradient: Optional[Any] = None,
) -> None:
    """What a model can tell about its parser when it is built: a setting that trains a parser
    the encoder does not have is an error, a transition loss set twice (the model's and the
    encoder's own) is an error, and a parser that nothing trains (no transition loss, no
    policy gradient, no soft stack) is a warning: it would pick every tree with an untrained
    argmax. `model`: the model's registered name, for the messages."""
    if not has_parser(encoder):
        for setting, value in (
            ("transition_loss_weight", transition_loss_weight),
            ("policy_gradient", policy_gradient),
        ):
            if value:
                raise ConfigurationError(
                    f"{model}: {setting} trains a parser, and this encoder has none: leave it "
                    f"out, or give the encoder one (a spinn encoder with a tracker block with "
                    f"predict_transitions: true, or a parser block)"
                )
        return
    # The default training policy (the given trees) is the one a policy gradient replaces.
    training_policy = getattr(encoder, "training_policy", None)
    if policy_gradient is not None and type(training_policy) not in (type(None), Given):
        raise ConfigurationError(
            f"{model}: the policy_gradient samples the training trees itself, so the encoder's "
            f"training_policy would not be followed: leave one of them out"
        )
    encoder_weight = getattr(encoder, "transition_loss_weight", 0.0)
    if transition_loss_weight and encoder_weight:
        raise ConfigurationError(
            f"{model}: both the model's transition_loss_weight ({transition_loss_weight}) and "
            f"the encoder's ({encoder_weight}) are set, so the transition loss would count "
            f"twice: keep the model's and set encoder.transition_loss_weight to 0"
        )
    if not (
        transition_loss_weight
        or encoder_weight
        or policy_gradient
        or getattr(encoder, "parser_learns_from_task", False)
    ):
        logger.warning(
            "%s: nothing trains the encoder's parser (transition_loss_weight is 0, no "
            "policy_gradient, no soft training_policy): it will choose every tree it parses "
            "with an untrained argmax. Set transition_loss_weight above 0 (the SPINN paper's "
            "alpha, e.g. 3.9), or a policy_gradient to train it from the task alone; ignore "
            "this for a parser trained elsewhere and loaded.",
            model,
        )


def check_beam_mix(model: str, encoder: Seq2VecEncoder, classifies_each_tree: bool) -> None:
    """A beam mixture whose `mix` asks the model to classify each tree alone ("predictions",
    "best_tree") needs a model that does (`classifies_each_tree`: `spinn_classifier`,
    `spinn_nli`); any other model would read the roots' mixture instead and train as
    `mix: "roots"` without a word, so it is a `ConfigurationError` there."""
    policy = getattr(encoder, "training_policy", None)
    mix = getattr(policy, "mix", "roots") if getattr(policy, "mixes", False) else "roots"
    if mix != "roots" and not classifies_each_tree:
        raise ConfigurationError(
            f"{model}: the encoder's training_policy has mix {mix!r}, which asks the model to "
            f"classify each of the beam's trees alone, and {model} reads one sentence vector: "
            f'set mix to "roots" (the roots\' mixture), or use spinn_classifier or spinn_nli'
        )


def mix_beam_predictions(per_tree: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """A beam that mixes predictions (`mix: "predictions"` / `"best_tree"`): `per_tree`
    (B, K, labels), the logits of each of a row's K trees (or pairs of trees) classified
    alone; `scores` (B, K), the parser's summed log-probabilities, -inf for an empty slot.
    The label distributions mixed by the softmax of the scores, as logits: the log of
    p(y) = sum_k w_k p(y | tree_k) (its softmax is the mixture)."""
    log_weights = torch.log_softmax(scores, dim=1).to(per_tree.dtype)
    return torch.logsumexp(log_weights.unsqueeze(2) + torch.log_softmax(per_tree, dim=2), dim=1)


def best_tree_loss(
    per_tree: torch.Tensor, scores: torch.Tensor, gold: torch.Tensor
) -> torch.Tensor:
    """The parser's part of `mix: "best_tree"` (hard EM over a beam), added to the mixed
    prediction's loss: of each row's K trees (`per_tree`: (B, K, labels) logits; `scores`:
    (B, K) the parser's summed log-probabilities, -inf for an empty slot), the one whose own
    prediction gives the gold label the highest probability is the target of the beam's
    softmax (its cross-entropy there): the parser pulled towards that tree by the full amount
    however close the others come, as best-draw's best draw but inside the beam. The
    classifier keeps learning from the mixture, not from the tree the label picked (trained on
    label-picked trees alone, it learns answers no test-time tree supports: the pilot that
    tried it fell to 26 % dev by epoch 4, against the mixture's 49 %)."""
    # Shape: (B, K), the gold label's log-probability under each tree alone.
    gold_log_probs = torch.log_softmax(per_tree, dim=2).gather(
        2, gold.view(-1, 1, 1).expand(-1, per_tree.size(1), 1)
    )[:, :, 0]
    alive = torch.isfinite(scores)
    best = gold_log_probs.detach().masked_fill(~alive, float("-inf")).argmax(dim=1, keepdim=True)
    return -torch.log_softmax(scores, dim=1).gather(1, best).mean()


@overload
def repeat_rows(batch: torch.Tensor, copies: int) -> torch.Tensor: ...


@overload
def repeat_rows(batch: None, copies: int) -> None: ...


@overload
def repeat_rows(batch: Optional[torch.Tensor], copies: int) -> Optional[torch.Tensor]: ...


def repeat_rows(batch: Optional[torch.Tensor], copies: int) -> Optional[torch.Tensor]:
    """`batch` (B, ...) repeated `copies` times along its first dimension (row c * B + b is
    row b's c-th copy): a batch encoded several times in one pass, e.g. several trees drawn
    per sentence (`PolicyGradient.draws`). None stays None."""
    if batch is None or copies == 1:
        return batch
    return batch.repeat(copies, *([1] * (batch.dim() - 1)))


def has_parser(encoder: Seq2VecEncoder) -> bool:
    """Whether `encoder` chooses its own transitions (a `TreeEncoder` with a parser)."""
    return isinstance(encoder, TreeEncoder) and encoder.has_parser


def parser_reads_token_ids(encoder: Seq2VecEncoder) -> bool:
    """Whether `encoder` wants the words' token ids for its parser (`parser_tokens`)."""
    return isinstance(encoder, TreeEncoder) and encoder.parser_reads_token_ids


def num_reduce_types(encoder: Seq2VecEncoder) -> int:
    """`TreeEncoder.num_reduce_types` of a tree encoder; 0 for any other encoder."""
    return encoder.num_reduce_types if isinstance(encoder, TreeEncoder) else 0


def has_nodes(encoder: Seq2VecEncoder) -> bool:
    """Whether `encode(..., return_nodes=True)` gives every node's state (a tree encoder)."""
    return isinstance(encoder, (TreeEncoder, DependencyTreeEncoder))


@dataclass
class StackedBatches:
    """Several sentence batches (premises and hypotheses, ...) as one: `inputs`, `mask` and
    `transitions` of all their sentences, padded to a common width (with 0, False and PAD)
    and stacked, batch after batch; `split` and `split_positions` cut what an encoder computes
    on them back into each batch's own."""

    inputs: torch.Tensor
    mask: torch.Tensor
    transitions: Optional[torch.Tensor]
    sizes: List[int]
    widths: List[int]

    def split(self, stacked: torch.Tensor) -> List[torch.Tensor]:
        """Rows of each batch: shape (batch_size_i, ...) each."""
        return list(stacked.split(self.sizes))

    def split_positions(self, stacked: torch.Tensor) -> List[torch.Tensor]:
        """Rows and positions of each batch (a per-position result, as a `Seq2SeqEncoder`'s):
        shape (batch_size_i, width_i, ...) each."""
        return [part[:, :width] for part, width in zip(self.split(stacked), self.widths)]


def stack_batches(batches: Sequence[SentenceBatch]) -> StackedBatches:
    """`batches` as one batch (see `StackedBatches`): the one way pairs go through an encoder
    in one call. Transitions are stacked when every batch has them and are None when none
    has; a batch without them next to one with them is refused (`ValueError`)."""
    given = [transitions for _, _, transitions in batches if transitions is not None]
    if 0 < len(given) < len(batches):
        raise ValueError(
            "give transitions for every sentence batch (premise and hypothesis) or none"
        )
    return StackedBatches(
        inputs=concat_padded([inputs for inputs, _, _ in batches], 0.0),
        mask=concat_padded([mask for _, mask, _ in batches], False),
        transitions=concat_padded(given, PAD) if given else None,
        sizes=[inputs.size(0) for inputs, _, _ in batches],
        widths=[inputs.size(1) for inputs, _, _ in batches],
    )


def encode_together(
    encoder: Seq2VecEncoder,
    batches: Sequence[SentenceBatch],
    reduce_types: Optional[Sequence[Optional[torch.Tensor]]] = None,
    policy: Optional[TransitionPolicy] = None,
    parser_tokens: Optional[Sequence[Optional[torch.Tensor]]] = None,
) -> List[Tuple[torch.Tensor, Optional[SpinnOutput]]]:
    """Encodes several sentence batches of one encoder (premises and hypotheses, ...) in ONE
    `encode` call, the sentences of all batches padded to a common width and stacked
    (`stack_batches`), and returns per batch what a call of its own returns:
    `(sentence vectors, SpinnOutput or None)` (the `SpinnOutput` for a `TreeEncoder`, cut to
    the batch's own steps).

    A step-by-step encoder (SPINN with tracking, an LSTM) runs max(T) sequential steps once
    instead of once per batch, on a batch as large as all of them. In evaluation mode the
    result equals separate calls up to float rounding. In training mode what the encoder
    normalises over a batch sees all the sentences at once: SPINN's `projection_batch_norm`
    takes its statistics over the words of every batch together and updates its running
    statistics once per call (and dropout draws differ, as between any two calls).

    A tree encoder gets its transitions through the same call when every batch has them; when
    only some do (one side to be parsed, the other given), the batches are encoded separately,
    since the encoder would follow different kinds of trees. `reduce_types`, one per batch
    (or None), go with the transitions to an encoder with typed REDUCE. Any other encoder
    reads the words alone. `policy`: see `encode`; `parser_tokens`: each batch's token ids
    (batch_size_i, num_tokens_i), for an encoder whose parser embeds them itself.
    """
    types = list(reduce_types) if reduce_types is not None else [None] * len(batches)
    if not isinstance(encoder, TreeEncoder):
        batches = [(inputs, mask, None) for inputs, mask, _ in batches]
        types = [None] * len(batches)
    token_ids: Sequence[Optional[torch.Tensor]] = [None] * len(batches)
    if parser_tokens is not None and parser_reads_token_ids(encoder):
        token_ids = parser_tokens
    given = [transitions for _, _, transitions in batches]
    if len(batches) < 2 or _some_but_not_all(given) or _some_but_not_all(types):
        encodings = [
            encode(
                encoder,
                inputs,
                mask,
                transitions,
                reduce_types=batch_types,
                policy=policy,
                parser_tokens=batch_token_ids,
            )
            for (inputs, mask, transitions), batch_types, batch_token_ids in zip(
                batches, types, token_ids
            )
        ]
        return [(encoding.sentence, encoding.tree) for encoding in encodings]
    stacked = stack_batches(batches)
    given_types = [t for t in types if t is not None]
    all_types = concat_padded(given_types, PAD) if given_types else None
    given_token_ids = [ids for ids in token_ids if ids is not None]
    encoding = encode(
        encoder,
        stacked.inputs,
        stacked.mask,
        stacked.transitions,
        reduce_types=all_types,
        policy=policy,
        parser_tokens=concat_padded(given_token_ids, 0) if given_token_ids else None,
    )
    trees: List[Optional[SpinnOutput]] = [None] * len(batches)
    if encoding.tree is not None:
        trees = list(encoding.tree.split(stacked.sizes))
    return list(zip(stacked.split(encoding.sentence), trees))


def _some_but_not_all(tensors: Sequence[Optional[torch.Tensor]]) -> bool:
    return 0 < sum(tensor is not None for tensor in tensors) < len(tensors)


def given_trees(transitions: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """`transitions` as a model hands them on: `None` when no sentence of the batch has a tree
    (a batch of lines without parses: readers give each an empty transitions field)."""
    if transitions is None or transitions.numel() == 0 or not bool((transitions != PAD).any()):
        return None
    return transitions


def rows_without_trees(transitions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Shape (batch_size,): the sentences with words but no given transition (lines without a
    parse in a batch with lines that have one)."""
    return (transitions == PAD).all(dim=1) & mask.bool().any(dim=1)


def with_default_trees(
    transitions: Optional[torch.Tensor], mask: torch.Tensor
) -> Optional[torch.Tensor]:
    """`transitions` with the balanced binary tree (the default of an encoder without a parser)
    in the rows of the sentences that have none; `None` when no sentence has a tree."""
    transitions = given_trees(transitions)
    if transitions is None:
        return None
    missing = rows_without_trees(transitions, mask)
    if not bool(missing.any()):
        return transitions
    # Shape: (num_missing, 2 * max_words - 1)
    balanced = default_transitions(mask[missing].long().sum(dim=1))
    width = max(transitions.size(1), balanced.size(1))
    filled = transitions.new_full((transitions.size(0), width), PAD)
    filled[:, : transitions.size(1)] = transitions
    filled[missing] = PAD
    filled[missing, : balanced.size(1)] = balanced.to(filled.dtype)
    return filled


def gold_like(gold: torch.Tensor, output: SpinnOutput) -> torch.Tensor:
    """`gold` transitions (or REDUCE types), shape (batch_size, steps), padded with PAD to
    `output`'s steps when it ran more: in a batch mixing sentences with and without a given
    tree, those without follow the parser's own parse, which may be longer than any gold one."""
    steps = output.transitions.size(1)
    if gold.size(1) >= steps:
        return gold
    return torch.nn.functional.pad(gold, (0, steps - gold.size(1)), value=PAD)
