"""The interface models use to ask a sentence encoder for its tree (`TreeEncoder`), and the one
way they call any `Seq2VecEncoder` (`encode`, and `has_parser`, `num_reduce_types`, ... to ask
what it can do), whose results say which tree each sentence was composed over in one vocabulary
(`transitions_source`); and given trees as models hand them on: a batch's sentences without a
tree (`given_trees`, `rows_without_trees`, `with_default_trees`) and gold transitions padded to
a pass's steps (`gold_like`).

Beside it, what else models share around an encoder, each in its module: the checks where word
vectors meet an encoder (`input_checks`), several sentence batches in one call
(`sentence_batches.encode_together`), the losses an encoder adds (`added_losses`), a beam's
losses (`beam_losses`), and the base of our models on one embedder and one encoder, which checks
the two together by the rule book (`sentence_encoder_model`, `spinn_core.rules`)."""

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence

import torch
from allennlp.modules import Seq2VecEncoder

from spinn_allennlp.modules.dependency_tree_encoder import DependencyTreeEncoder
from spinn_core.batch import default_transitions
from spinn_core.child_sum import DependencyOutput
from spinn_core.output import GIVEN, Mode, SpinnOutput
from spinn_core.policies import TransitionPolicy
from spinn_core.transitions import PAD

# Which tree a sentence was composed over: a model's `transitions_source` (or
# `premise_transitions_source`, ...) output, one value per sentence, in one vocabulary:
# * the encoder's own choice: its mode (`spinn_core.output.Mode`): `"predicted"`, `"mixed"`,
#   `"soft"`, ...;
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
        """`policy` (`spinn_core.policies`), when given, decides the transitions instead of the
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
