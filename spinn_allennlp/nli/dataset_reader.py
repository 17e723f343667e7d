"""SNLI / MultiNLI reader that turns each sentence's binary parse into gold SHIFT/REDUCE
transitions for SPINN.

The parse's words are the tokens (no re-tokenization), so tokens and transitions always agree.
Pairs given as raw text (prediction time) are tokenized with a blank spaCy English tokenizer
and carry no transitions: the model has to build its own trees for them.
"""
import gzip
import json
import logging
import re
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import spacy
import torch
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer
from allennlp.data.fields import Field, LabelField, MetadataField, TensorField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer
from spacy.lang.char_classes import HYPHENS

from spinn_allennlp.data_paths import expand_path
from spinn_allennlp.core.transitions import (
    PAD,
    MalformedParseError,
    crop_pad_left,
    parse_to_transitions,
)

logger = logging.getLogger(__name__)

LABELS = ("entailment", "neutral", "contradiction")
# Annotators did not agree on a label: SNLI keeps the pair but it is not used for training or
# evaluation (Bowman et al. 2015).
NO_GOLD_LABEL = "-"
LEFT_PAD_TOKEN = "@@LEFTPAD@@"

# PTB escapes that the Stanford parser writes into SNLI's parses.
_PTB_BRACKETS = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
}
_BRACKET_ESCAPES = {raw: escaped for escaped, raw in _PTB_BRACKETS.items()}
# The parser rewrites quotes (" -> `` or '', ' -> ` or ') and keeps some as they are (a stray
# "happy`" stays "`"), so a run of quote marks is compared only as "some quote marks here".
_QUOTE_RUN = re.compile(r"[`'\"]+")
_WHITESPACE = re.compile(r"\s+")

# Field names: SNLI/MultiNLI names first, then the plain names used for raw pairs.
_PREMISE_KEYS = ("sentence1", "premise")
_HYPOTHESIS_KEYS = ("sentence2", "hypothesis")
_PREMISE_PARSE_KEYS = ("sentence1_binary_parse", "premise_binary_parse")
_HYPOTHESIS_PARSE_KEYS = ("sentence2_binary_parse", "hypothesis_binary_parse")

Sentence = Union[str, Sequence[str], Sequence[Token]]


class MalformedExampleError(ValueError):
    """An NLI example that cannot become an instance.

    ``reason`` is the short category the reader counts in ``skipped``; the message adds detail.
    """

    def __init__(self, reason: str, detail: Optional[str] = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@DatasetReader.register("snli_transitions")
class SnliTransitionsReader(DatasetReader):
    """Reads SNLI-format JSONL (plain or ``.gz``) into premise/hypothesis instances with gold
    transitions.

    Each line needs ``sentence1``/``sentence2`` (or ``premise``/``hypothesis``); with
    ``sentence1_binary_parse``/``sentence2_binary_parse`` (or ``premise_binary_parse``/
    ``hypothesis_binary_parse``) the instance gets ``premise_transitions`` and
    ``hypothesis_transitions`` (``TensorField`` of SHIFT=0 / REDUCE=1, padded with -1).
    ``gold_label`` becomes ``label``; lines labelled "-" are dropped and counted in
    ``num_no_gold_label``. Malformed lines are logged, skipped and counted in ``skipped``
    (reason -> count); both counters are reset by every read.

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        Default `{"tokens": SingleIdTokenIndexer()}`.
    crop_pad_length : `int`, optional (default = `None`)
        The paper's fixed-length mode (§3.5): every sentence is cropped or padded at the left to
        exactly this many tokens (pad token "@@LEFTPAD@@") and ``2 * length - 1`` transitions.
        `None` keeps sentences as they are (batches are padded to their longest sentence).
    max_length : `int`, optional (default = `None`)
        Pairs with a sentence of more tokens than this are skipped (and counted), not cropped.
    lowercase : `bool`, optional (default = `False`)
    **kwargs
        Passed to `DatasetReader` (`max_instances`, ...). Lines are sharded across distributed
        and data-loader workers, so `max_instances` counts lines read, skipped ones included.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        crop_pad_length: Optional[int] = None,
        max_length: Optional[int] = None,
        lowercase: bool = False,
        **kwargs,
    ) -> None:
        kwargs.setdefault("manual_distributed_sharding", True)
        kwargs.setdefault("manual_multiprocess_sharding", True)
        super().__init__(**kwargs)
        if crop_pad_length is not None and crop_pad_length < 1:
            raise ValueError(f"crop_pad_length must be at least 1, got {crop_pad_length}")
        if max_length is not None and max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._crop_pad_length = crop_pad_length
        self._max_length = max_length
        self._lowercase = lowercase
        self.skipped: Counter = Counter()
        self.num_no_gold_label = 0

    def _read(self, file_path) -> Iterable[Instance]:
        self.skipped = Counter()
        self.num_no_gold_label = 0
        num_instances = 0
        # "${SNLI_TRAIN:-data/...}" in the configs: bundled data unless a variable says otherwise.
        file_path = expand_path(file_path)
        local_path = cached_path(file_path)
        opener = gzip.open if local_path.endswith(".gz") else open
        with opener(local_path, "rb") as data_file:
            for line_number, line in self.shard_iterable(enumerate(data_file, start=1)):
                try:
                    instance = self._line_to_instance(line, line_number)
                except MalformedExampleError as error:
                    self.skipped[error.reason] += 1
                    logger.warning("%s:%d: skipped: %s", file_path, line_number, error)
                    continue
                if instance is None:
                    continue
                num_instances += 1
                yield instance
        self._log_summary(file_path, num_instances)

    def _line_to_instance(self, line: bytes, line_number: int) -> Optional[Instance]:
        """The line's instance, or None for a blank line or one with no gold label."""
        try:
            text = line.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            raise MalformedExampleError("invalid UTF-8", str(error))
        if line_number == 1:
            text = text.lstrip("\ufeff")
        if not text.strip():
            return None
        try:
            example = json.loads(text)
        except json.JSONDecodeError as error:
            raise MalformedExampleError("bad JSON", str(error))
        if not isinstance(example, dict):
            kind = type(example).__name__
            raise MalformedExampleError("bad JSON", f"expected an object, got {kind}")

        label = example.get("gold_label")
        if label == NO_GOLD_LABEL:
            self.num_no_gold_label += 1
            return None
        premise = _string_field(example, _PREMISE_KEYS, required=True)
        hypothesis = _string_field(example, _HYPOTHESIS_KEYS, required=True)
        premise_parse = _string_field(example, _PREMISE_PARSE_KEYS)
        hypothesis_parse = _string_field(example, _HYPOTHESIS_PARSE_KEYS)
        # Instances in one batch must have the same fields: both parses or neither.
        if (premise_parse is None) != (hypothesis_parse is None):
            missing = _PREMISE_PARSE_KEYS if premise_parse is None else _HYPOTHESIS_PARSE_KEYS
            raise MalformedExampleError("missing field", " or ".join(missing))
        pair_id = example.get("pairID")

        return self._make_instance(
            premise, hypothesis, premise_parse, hypothesis_parse, label, pair_id, self._max_length
        )

    def text_to_instance(  # type: ignore
        self,
        premise: Sentence,
        hypothesis: Sentence,
        premise_binary_parse: Optional[str] = None,
        hypothesis_binary_parse: Optional[str] = None,
        label: Optional[str] = None,
        pair_id: Optional[str] = None,
    ) -> Instance:
        """Builds one instance; raises :class:`MalformedExampleError` (a ``ValueError``) when a
        parse is malformed or doesn't match its sentence, a sentence is empty or the label is
        unknown. Parses are optional but go together: give both or neither.

        ``max_length`` is not applied here: a predictor should answer for long sentences too."""
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
        max_length: Optional[int] = None,
    ) -> Instance:
        if (premise_binary_parse is None) != (hypothesis_binary_parse is None):
            raise MalformedExampleError(
                "missing field", "give both binary parses or neither (fields must match in a batch)"
            )
        if label is not None and label not in LABELS:
            raise MalformedExampleError("unknown label", f"{label!r} is not one of {LABELS}")

        premise_tokens, premise_transitions = self._tokens_and_transitions(
            "premise", premise, premise_binary_parse
        )
        hypothesis_tokens, hypothesis_transitions = self._tokens_and_transitions(
            "hypothesis", hypothesis, hypothesis_binary_parse
        )
        fields: Dict[str, Field] = {}
        metadata: Dict[str, Any] = {
            "transitions_source": "none" if premise_transitions is None else "gold"
        }
        for side, tokens, transitions in (
            ("premise", premise_tokens, premise_transitions),
            ("hypothesis", hypothesis_tokens, hypothesis_transitions),
        ):
            if max_length is not None and len(tokens) > max_length:
                raise MalformedExampleError(
                    "too long", f"{side} has {len(tokens)} tokens > max_length {max_length}"
                )
            if self._crop_pad_length is not None:
                tokens, transitions = self._crop_pad(tokens, transitions)
            # Indexers are set later, in apply_token_indexers (lazy, worker-friendly).
            fields[side] = TextField([Token(token) for token in tokens])
            if transitions is not None:
                fields[f"{side}_transitions"] = TensorField(
                    torch.tensor(transitions, dtype=torch.long), padding_value=PAD
                )
            # The tokens the model sees, aligned with the transitions (padding included).
            metadata[f"{side}_tokens"] = tokens
        if label is not None:
            fields["label"] = LabelField(label)
        if pair_id is not None:
            metadata["pairID"] = pair_id
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["premise"].token_indexers = self._token_indexers  # type: ignore
        instance.fields["hypothesis"].token_indexers = self._token_indexers  # type: ignore

    def _tokens_and_transitions(
        self, side: str, sentence: Sentence, binary_parse: Optional[str]
    ) -> Tuple[List[str], Optional[List[int]]]:
        if isinstance(sentence, str):
            text = sentence
        else:
            words = [word.text if isinstance(word, Token) else word for word in sentence]
            text = " ".join(words)
        if not text.strip():
            raise MalformedExampleError("empty sentence", f"{side} is empty")

        if binary_parse is None:
            tokens = tokenize(text) if isinstance(sentence, str) else words
            transitions = None
        else:
            try:
                tokens, transitions = parse_to_transitions(binary_parse)
            except MalformedParseError as error:
                raise MalformedExampleError("malformed parse", f"{side} parse: {error}") from error
            if _comparable(" ".join(_unescape_ptb(tokens))) != _comparable(text):
                raise MalformedExampleError(
                    "parse tokens don't match the sentence",
                    f"{side} parse has {' '.join(tokens)!r}, sentence is {text!r}",
                )
        if self._lowercase:
            tokens = [token.lower() for token in tokens]
        return tokens, transitions

    def _crop_pad(
        self, tokens: List[str], transitions: Optional[List[int]]
    ) -> Tuple[List[str], Optional[List[int]]]:
        length = self._crop_pad_length
        if transitions is None:
            # No tree to keep valid: plain left crop / pad so the length is still fixed.
            tokens = tokens[-length:]
            return [LEFT_PAD_TOKEN] * (length - len(tokens)) + tokens, None
        return crop_pad_left(tokens, transitions, length, LEFT_PAD_TOKEN)

    def _log_summary(self, file_path: str, num_instances: int) -> None:
        num_skipped = sum(self.skipped.values())
        reasons = ", ".join(f"{reason}: {count}" for reason, count in self.skipped.most_common())
        logger.log(
            logging.WARNING if num_skipped else logging.INFO,
            "%s: read %d instances; dropped %d with no gold label; skipped %d malformed%s",
            file_path,
            num_instances,
            self.num_no_gold_label,
            num_skipped,
            f" ({reasons})" if reasons else "",
        )


def _string_field(
    example: Dict[str, Any], keys: Sequence[str], required: bool = False
) -> Optional[str]:
    """The value of the first of ``keys`` present (not null) in ``example``."""
    for key in keys:
        value = example.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            kind = type(value).__name__
            raise MalformedExampleError("bad field", f"{key} is a {kind}, not a string")
        return value
    if required:
        raise MalformedExampleError("missing field", " or ".join(keys))
    return None


def _unescape_ptb(tokens: Sequence[str]) -> List[str]:
    return [_PTB_BRACKETS.get(token, token) for token in tokens]


def _comparable(text: str) -> str:
    """Text with whitespace removed and quote marks normalised, to compare a parse's words with
    the raw sentence."""
    return _QUOTE_RUN.sub('"', _WHITESPACE.sub("", text))


_SPACY_TOKENIZER = None


def tokenize(text: str) -> List[str]:
    """Tokenizes raw text roughly the way SNLI's parses are tokenized (PTB style), so words
    at prediction time find the training vocabulary.

    A blank spaCy English pipeline: no model download (none is reachable here). Hyphenated
    words stay whole and brackets and double quotes get their PTB escapes, as in the parses.
    """
    global _SPACY_TOKENIZER
    if _SPACY_TOKENIZER is None:
        nlp = spacy.blank("en")
        # spaCy splits "tee-shirt" at the hyphen; the PTB tokenizer (and SNLI) doesn't.
        infixes = [pattern for pattern in nlp.Defaults.infixes if HYPHENS not in pattern]
        nlp.tokenizer.infix_finditer = spacy.util.compile_infix_regex(infixes).finditer
        _SPACY_TOKENIZER = nlp.tokenizer
    tokens = [token.text for token in _SPACY_TOKENIZER(text) if not token.is_space]
    return _escape_ptb(tokens)


def _escape_ptb(tokens: List[str]) -> List[str]:
    escaped = []
    open_quote = True
    for token in tokens:
        if token == '"':
            # Plain quotes alternate: opening `` then closing ''.
            escaped.append("``" if open_quote else "''")
            open_quote = not open_quote
        else:
            escaped.append(_BRACKET_ESCAPES.get(token, token))
    return escaped
