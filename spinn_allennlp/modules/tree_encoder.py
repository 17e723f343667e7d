"""The interface models use to ask a sentence encoder for its tree."""

from typing import List, Optional, Sequence, Tuple

import torch
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.core.batching import concat_padded, default_transitions
from spinn_allennlp.core.output import SpinnOutput
from spinn_allennlp.core.transitions import PAD

# One batch of sentences for an encoder: inputs (B, N, input_dim), mask (B, N) and, for a tree
# encoder, transitions (B, T) or None.
SentenceBatch = Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]


class TreeEncoder(Seq2VecEncoder):
    """A `Seq2VecEncoder` that composes over a binary tree and reports it.

    `forward(inputs, mask, transitions=None)` returns the sentence vector like any
    `Seq2VecEncoder`, so a tree encoder drops into any AllenNLP model. A model that knows about
    trees calls `encode` instead and gets a `SpinnOutput`: the sentence vector, the transitions
    followed (gold, the default tree, or the encoder's own parse), the parser's logits when
    `has_parser`, and on request every node's state. Models test for this interface, not for a
    concrete encoder class.

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
    ) -> SpinnOutput:
        raise NotImplementedError

    def forward(
        self,
        inputs: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        transitions: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        return self.encode(inputs, mask, transitions).sentence


def encode_together(
    encoder: Seq2VecEncoder,
    batches: Sequence[SentenceBatch],
    reduce_types: Optional[Sequence[Optional[torch.Tensor]]] = None,
) -> List[Tuple[torch.Tensor, Optional[SpinnOutput]]]:
    """Encodes several sentence batches of one encoder (premises and hypotheses, ...) in ONE
    encoder call, the sentences of all batches padded to a common width and stacked, and
    returns per batch what a call of its own returns: `(sentence vectors, SpinnOutput or None)`
    (the `SpinnOutput` for a `TreeEncoder`, cut to the batch's own steps).

    A step-by-step encoder (SPINN with tracking, an LSTM) runs max(T) sequential steps once
    instead of once per batch, on a batch as large as all of them. In evaluation mode the
    result equals separate calls up to float rounding. In training mode what the encoder
    normalises over a batch sees all the sentences at once: SPINN's `projection_batch_norm`
    takes its statistics over the words of every batch together and updates its running
    statistics once per call (and dropout draws differ, as between any two calls).

    A tree encoder gets its transitions through the same call when every batch has them; when
    only some do (one side to be parsed, the other given), the batches are encoded separately,
    since the encoder would follow different kinds of trees. `reduce_types`, one per batch
    (or None), go with the transitions to an encoder with typed REDUCE.
    """
    sizes = [inputs.size(0) for inputs, _, _ in batches]
    if not isinstance(encoder, TreeEncoder):
        if len(batches) < 2:
            return [(encoder(inputs, mask), None) for inputs, mask, _ in batches]
        inputs = concat_padded([inputs for inputs, _, _ in batches], 0.0)
        mask = concat_padded([mask for _, mask, _ in batches], False)
        return [(vectors, None) for vectors in encoder(inputs, mask).split(sizes)]
    types = list(reduce_types) if reduce_types is not None else [None] * len(batches)
    given = [transitions for _, _, transitions in batches if transitions is not None]
    given_types = [t for t in types if t is not None]
    if len(batches) < 2 or 0 < len(given) < len(batches) or 0 < len(given_types) < len(batches):
        outputs = [
            encoder.encode(inputs, mask, transitions, reduce_types=batch_types)
            for (inputs, mask, transitions), batch_types in zip(batches, types)
        ]
    else:
        inputs = concat_padded([inputs for inputs, _, _ in batches], 0.0)
        mask = concat_padded([mask for _, mask, _ in batches], False)
        transitions = concat_padded(given, PAD) if given else None
        all_types = concat_padded(given_types, PAD) if given_types else None
        outputs = encoder.encode(inputs, mask, transitions, reduce_types=all_types).split(sizes)
    return [(output.sentence, output) for output in outputs]


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


def merge_rows(
    outputs: Sequence[SpinnOutput], rows: Sequence[torch.Tensor], batch_size: int
) -> SpinnOutput:
    """One `SpinnOutput` of `batch_size` sentences from the outputs of groups of them encoded
    apart (`rows[i]`: the batch positions of `outputs[i]`'s sentences), each per-step tensor
    padded to the longest group's steps (PAD for transitions and types, 0 for the rest). The
    mode is the first group's."""
    steps = max(output.transitions.size(1) for output in outputs)

    def merged(name: str, fill: float) -> Optional[torch.Tensor]:
        parts = [getattr(output, name) for output in outputs]
        if any(part is None for part in parts):
            return None
        shape = (batch_size, steps) + tuple(parts[0].shape[2:])
        result = parts[0].new_full(shape, fill)
        for part, index in zip(parts, rows):
            result[index, : part.size(1)] = part
        return result

    sentence = outputs[0].sentence.new_zeros(batch_size, outputs[0].sentence.size(1))
    for output, index in zip(outputs, rows):
        sentence[index] = output.sentence
    transitions = merged("transitions", PAD)
    assert transitions is not None
    return SpinnOutput(
        sentence=sentence,
        transitions=transitions,
        transition_logits=merged("transition_logits", 0.0),
        node_hidden=merged("node_hidden", 0.0),
        node_states=merged("node_states", 0.0),
        mode=outputs[0].mode,
        reduce_strengths=merged("reduce_strengths", 0.0),
        reduce_types=merged("reduce_types", PAD),
        reduce_type_logits=merged("reduce_type_logits", 0.0),
    )


def gold_like(gold: torch.Tensor, output: SpinnOutput) -> torch.Tensor:
    """`gold` transitions (or REDUCE types), shape (batch_size, steps), padded with PAD to
    `output`'s steps when it ran more: in a batch mixing sentences with and without a given
    tree, those without follow the parser's own parse, which may be longer than any gold one."""
    steps = output.transitions.size(1)
    if gold.size(1) >= steps:
        return gold
    return torch.nn.functional.pad(gold, (0, steps - gold.size(1)), value=PAD)
