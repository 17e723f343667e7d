"""Several sentence batches through one encoder call: premises and hypotheses stacked into one
batch (`stack_batches`, `StackedBatches`) and encoded together (`encode_together`), and a batch
repeated to be encoded several times in one pass (`repeat_rows`)."""

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, overload

import torch
from allennlp.modules import Seq2VecEncoder

from spinn_allennlp.modules.tree_encoder import TreeEncoder, encode, parser_reads_token_ids
from spinn_core.batch import concat_padded
from spinn_core.output import SpinnOutput
from spinn_core.policies import TransitionPolicy
from spinn_core.transitions import PAD

# One batch of sentences for an encoder: inputs (B, N, input_dim), mask (B, N) and, for a tree
# encoder, transitions (B, T) or None.
SentenceBatch = Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]


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
