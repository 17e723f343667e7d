from typing import Any, Dict, List, Optional, Tuple

from allennlp.data import DatasetReader, Instance, Token, TokenIndexer
from allennlp.data.fields import Field, LabelField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from spinn_allennlp.data.dataset_readers import (
    MalformedExampleError,
    TreeDatasetReader,
    parse_json_object,
    string_field,
)
from spinn_allennlp.data.dataset_readers.tree_dataset_reader import Sentence
from spinn_allennlp.data.fields import transitions_field
from spinn_allennlp.data.reduce_types import (
    SNLI_REDUCE_TYPES,
    MalformedTreeError,
    labeled_spans,
    reduce_labels,
    reduce_type_ids,
)
from spinn_allennlp.modules.tree_encoder import GOLD, NO_SOURCE
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules

LABELS = ("entailment", "neutral", "contradiction")
# Annotators did not agree on a label: SNLI keeps the pair but it is not used for training or
# evaluation (Bowman et al. 2015).
NO_GOLD_LABEL = "-"

# Field names of a JSON line: SNLI/MultiNLI names first, then the plain names of raw pairs.
PREMISE_KEYS = ("sentence1", "premise")
HYPOTHESIS_KEYS = ("sentence2", "hypothesis")
PREMISE_PARSE_KEYS = ("sentence1_binary_parse", "premise_binary_parse")
HYPOTHESIS_PARSE_KEYS = ("sentence2_binary_parse", "hypothesis_binary_parse")
PAIR_ID_KEYS = ("pairID", "pair_id")
# Labeled (PTB) parses, for typed REDUCEs.
PREMISE_LABELED_KEYS = ("sentence1_parse", "premise_parse")
HYPOTHESIS_LABELED_KEYS = ("sentence2_parse", "hypothesis_parse")


@DatasetReader.register("snli_transitions")
class SnliTransitionsReader(TreeDatasetReader):
    """Reads SNLI/MultiNLI JSON lines (plain or `.gz`) into premise/hypothesis instances with
    gold SHIFT/REDUCE transitions from each sentence's binary parse.

    Each line needs `sentence1`/`sentence2` (or `premise`/`hypothesis`). With
    `sentence1_binary_parse`/`sentence2_binary_parse` (or `premise_binary_parse`/
    `hypothesis_binary_parse`) the parse's words are the tokens and its brackets the
    transitions; without them the sentences are tokenized and the instance has no transitions
    (the model builds its own trees), unless a `tree_source` gives them trees. `gold_label`
    becomes `label`; pairs labelled "-" are dropped and counted (`dropped["no gold label"]`).
    Malformed lines, and lines with a sentence the tree source has no tree for, are logged and
    counted (see `TreeDatasetReader`).

    Instance fields: `premise`, `hypothesis` (`TextField`), `premise_transitions`,
    `hypothesis_transitions` (`TensorField`, padded with -1; empty for a sentence with neither
    a parse nor a tree source, so that a file may mix lines with and without parses),
    `label` (`LabelField`; when labelled), `metadata` (`premise_tokens`, `hypothesis_tokens`,
    `transitions_source`: "gold", the tree source's name, or "none"; `pairID` and MultiNLI's
    `genre` when given). MultiNLI's JSON lines have SNLI's fields and read as they are.

    Registered as a `DatasetReader` with name "snli_transitions".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        Default `{"tokens": SingleIdTokenIndexer()}`.
    reduce_types : `bool`, optional (default = `False`)
        Typed REDUCEs (NSHRDLU §3.3): also `premise_reduce_types` / `hypothesis_reduce_types`,
        the type of each REDUCE of the binary parse (an index into `SNLI_REDUCE_TYPES`: NP,
        VP, S, PP, SBAR, ADJP, ADVP, OTHER; -1 at SHIFTs), from the labeled parse
        `sentence1_parse` / `sentence2_parse` (see `data/reduce_types.py`). Lines with binary
        parses need the labeled ones too, over the same words. Not with `crop_pad_length`.
    **kwargs
        `tokenizer`, `crop_pad_length`, `max_length`, `lowercase`, `tree_source`: see
        `TreeDatasetReader`;
        the rest goes to `DatasetReader` (`max_instances`, ...).
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        reduce_types: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        with configuration_errors():
            rules.check_typed_reduce_reading(reduce_types, self._crop_pad_length)
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._reduce_types = reduce_types

    @property
    def num_no_gold_label(self) -> int:
        """Pairs dropped by the last read because annotators gave no gold label."""
        return self.dropped["no gold label"]

    def line_to_instance(self, line: str, line_number: int) -> Optional[Instance]:
        example = parse_json_object(line)
        if example.get("gold_label") == NO_GOLD_LABEL:
            self.drop("no gold label")
            return None
        return self.example_to_instance(example, check_length=True)

    def example_to_instance(
        self, example: Dict[str, Any], use_label: bool = True, check_length: bool = False
    ) -> Instance:
        """The instance of one decoded JSON line (what a predictor receives as well): the
        sentences, parses and pair id under any of the names above; `gold_label` unless
        `use_label` is false. Raises `MalformedExampleError` (a `ValueError`) for what is
        missing, of the wrong type or malformed."""
        label = example.get("gold_label") if use_label else None
        if label is not None and not isinstance(label, str):
            raise MalformedExampleError("bad field", f"gold_label is a {type(label).__name__}")
        premise_parse = string_field(example, PREMISE_PARSE_KEYS)
        hypothesis_parse = string_field(example, HYPOTHESIS_PARSE_KEYS)
        # Instances in one batch must have the same fields: both parses or neither.
        if (premise_parse is None) != (hypothesis_parse is None):
            missing = PREMISE_PARSE_KEYS if premise_parse is None else HYPOTHESIS_PARSE_KEYS
            raise MalformedExampleError("missing field", " or ".join(missing))
        pair_id = next((example[key] for key in PAIR_ID_KEYS if example.get(key) is not None), None)
        labeled = None
        if self._reduce_types and premise_parse is not None:
            labeled = (
                string_field(example, PREMISE_LABELED_KEYS, required=True),
                string_field(example, HYPOTHESIS_LABELED_KEYS, required=True),
            )
        return self._make_instance(
            string_field(example, PREMISE_KEYS, required=True),  # type: ignore[arg-type]
            string_field(example, HYPOTHESIS_KEYS, required=True),  # type: ignore[arg-type]
            premise_parse,
            hypothesis_parse,
            label,
            None if pair_id is None else str(pair_id),
            check_length=check_length,
            labeled_parses=labeled,
            # MultiNLI's lines (the same fields as SNLI's) name their genre: kept, so that
            # a prediction or an evaluation can be broken down by it.
            genre=example["genre"] if isinstance(example.get("genre"), str) else None,
        )

    def text_to_instance(
        self,
        premise: Sentence,
        hypothesis: Sentence,
        premise_binary_parse: Optional[str] = None,
        hypothesis_binary_parse: Optional[str] = None,
        label: Optional[str] = None,
        pair_id: Optional[str] = None,
    ) -> Instance:
        """One instance. Sentences are raw text or token lists; parses are optional but go
        together (both or neither). Raises `MalformedExampleError` (a `ValueError`) when a parse
        is malformed or doesn't match its sentence, a sentence is empty or the label unknown.
        `max_length` is not applied: a predictor should answer for long sentences too."""
        return self._make_instance(
            premise, hypothesis, premise_binary_parse, hypothesis_binary_parse, label, pair_id
        )

    def _make_instance(
        self,
        premise: Sentence,
        hypothesis: Sentence,
        premise_binary_parse: Optional[str],
        hypothesis_binary_parse: Optional[str],
        label: Optional[str],
        pair_id: Optional[str],
        check_length: bool = False,
        labeled_parses: Optional[Tuple[Optional[str], Optional[str]]] = None,
        genre: Optional[str] = None,
    ) -> Instance:
        if (premise_binary_parse is None) != (hypothesis_binary_parse is None):
            raise MalformedExampleError(
                "missing field", "give both binary parses or neither (fields must match in a batch)"
            )
        if label is not None and label not in LABELS:
            raise MalformedExampleError("unknown label", f"{label!r} is not one of {LABELS}")

        fields: Dict[str, Field] = {}
        if premise_binary_parse is not None:
            source = GOLD
        else:
            source = NO_SOURCE if self.tree_source is None else self.tree_source.name
        metadata: Dict[str, Any] = {"transitions_source": source}
        for side, sentence, parse, labeled in (
            ("premise", premise, premise_binary_parse, (labeled_parses or (None, None))[0]),
            (
                "hypothesis",
                hypothesis,
                hypothesis_binary_parse,
                (labeled_parses or (None, None))[1],
            ),
        ):
            tokens, transitions = self.sentence_tokens_and_transitions(side, sentence, parse)
            if check_length:
                self.check_length(side, tokens)
            tokens, transitions = self.crop_pad(tokens, transitions)
            # Indexers are set later, in apply_token_indexers (lazy, worker-friendly).
            fields[side] = TextField([Token(token) for token in tokens])
            # A sentence without a tree (no parse, no tree source) gets an empty field, so that
            # lines with and without parses can share a batch; the model decides its tree.
            fields[f"{side}_transitions"] = transitions_field(transitions or [])
            if self._reduce_types:
                types: List[int] = []
                if labeled is not None and transitions is not None:
                    types = _reduce_types(side, labeled, tokens, transitions)
                fields[f"{side}_reduce_types"] = transitions_field(types)
            # The tokens the model sees, aligned with the transitions (padding included).
            metadata[f"{side}_tokens"] = tokens
        if label is not None:
            fields["label"] = LabelField(label)
        if pair_id is not None:
            metadata["pairID"] = pair_id
        if genre is not None:
            metadata["genre"] = genre
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        for side in ("premise", "hypothesis"):
            instance.fields[side].token_indexers = self._token_indexers  # type: ignore[attr-defined]


def _reduce_types(side: str, labeled: str, tokens: List[str], transitions: List[int]) -> List[int]:
    try:
        words, spans = labeled_spans(labeled)
    except MalformedTreeError as error:
        raise MalformedExampleError("malformed labeled parse", f"{side}: {error}") from error
    if words != tokens:
        raise MalformedExampleError(
            "labeled parse doesn't match the binary parse",
            f"{side}: {' '.join(words)!r} vs {' '.join(tokens)!r}",
        )
    return reduce_type_ids(reduce_labels(spans, transitions), SNLI_REDUCE_TYPES)
