from typing import Any, Dict, List, Optional

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


@DatasetReader.register("text_classification_transitions")
class TextClassificationTransitionsReader(TreeDatasetReader):
    """Reads single sentences with a label for `spinn_classifier`, with real trees: JSON lines
    as AllenNLP's `text_classification_json` reads them, plus an optional binary parse,

        {"text": "A lovely film .", "label": "pos", "binary_parse": "( ( A ( lovely film ) ) . )"}

    With a binary parse the parse's words are the tokens and its brackets the gold transitions
    (the words must spell `text`, up to whitespace, PTB escapes and quote marks); without one
    the text is tokenized and the tree comes from `tree_source` (`"benepar"`: a parser's;
    `"balanced"`, ...). With neither, the sentence gets an empty `transitions` field and the
    model decides its tree (its encoder's parser, or the balanced tree): a file may mix lines
    with and without parses.

    Lines that cannot be used are logged (`file:line: skipped: reason`), counted in `skipped`
    and skipped (see `TreeDatasetReader`): bad JSON, a missing or empty text, a malformed parse
    or one whose words are not the text's, a sentence the tree source has no tree for, one
    longer than `max_length`, a missing label, or one not in `labels`. A one-word sentence is
    one SHIFT, and fine.

    Instance fields: `tokens` (`TextField`), `transitions` (`TensorField` of SHIFT/REDUCE, PAD
    -1; empty without a tree), `label` (`LabelField`; when labelled), `metadata` (`tokens`;
    `transitions_source`: "gold" for a parse, the tree source's name, or "none").

    Registered as a `DatasetReader` with name "text_classification_transitions".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional
        Default `{"tokens": SingleIdTokenIndexer()}`.
    text_key : `str`, optional (default = `"text"`)
        The field of a line holding the sentence.
    label_key : `str`, optional (default = `"label"`)
        The field holding the label: a string, or an integer (read as its string, e.g. "3").
    parse_key : `str`, optional (default = `"binary_parse"`)
        The field holding the optional binary parse, `( ( The cat ) sat )`.
    labels : `List[str]`, optional (default = `None`)
        The labels a line may have; a line with another is skipped ("unknown label"). `None`
        accepts any.
    **kwargs
        `tokenizer`, `crop_pad_length`, `max_length`, `lowercase`, `tree_source`: see
        `TreeDatasetReader`; the rest goes to `DatasetReader` (`max_instances`, ...).
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        text_key: str = "text",
        label_key: str = "label",
        parse_key: str = "binary_parse",
        labels: Optional[List[str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._text_key = text_key
        self._label_key = label_key
        self._parse_key = parse_key
        self._labels = None if labels is None else [str(label) for label in labels]

    @property
    def text_key(self) -> str:
        """The field of a line holding the sentence."""
        return self._text_key

    def line_to_instance(self, line: str, line_number: int) -> Optional[Instance]:
        example = parse_json_object(line)
        label = example.get(self._label_key)
        if label is None:
            raise MalformedExampleError("missing field", self._label_key)
        return self.example_to_instance(example, check_length=True)

    def example_to_instance(
        self, example: Dict[str, Any], use_label: bool = True, check_length: bool = False
    ) -> Instance:
        """The instance of one decoded JSON line (what a predictor receives as well); the label
        unless `use_label` is false. Raises `MalformedExampleError` (a `ValueError`) for what
        is missing, of the wrong type or malformed."""
        text = string_field(example, [self._text_key], required=True)
        parse = string_field(example, [self._parse_key])
        label = example.get(self._label_key) if use_label else None
        if isinstance(label, bool) or not isinstance(label, (str, int, type(None))):
            raise MalformedExampleError(
                "bad field", f"{self._label_key} must be a string or an integer"
            )
        assert text is not None  # required
        return self._make_instance(
            text, parse, None if label is None else str(label), check_length=check_length
        )

    def text_to_instance(
        self, text: Sentence, binary_parse: Optional[str] = None, label: Optional[str] = None
    ) -> Instance:
        """One instance of a sentence (raw text or tokens), its optional binary parse and
        label. Raises `MalformedExampleError` (a `ValueError`) for an empty sentence, a
        malformed parse or one that doesn't match the sentence, or an unknown label.
        `max_length` is not applied: a predictor should answer for long sentences too."""
        return self._make_instance(text, binary_parse, label)

    def _make_instance(
        self,
        text: Sentence,
        binary_parse: Optional[str],
        label: Optional[str],
        check_length: bool = False,
    ) -> Instance:
        if label is not None and self._labels is not None and label not in self._labels:
            raise MalformedExampleError(
                "unknown label", f"{label!r} is not one of {', '.join(self._labels)}"
            )
        tokens, transitions = self.sentence_tokens_and_transitions("text", text, binary_parse)
        if check_length:
            self.check_length("text", tokens)
        tokens, transitions = self.crop_pad(tokens, transitions)
        if binary_parse is not None:
            source = "gold"
        else:
            source = "none" if self.tree_source is None else self.tree_source.name
        fields: Dict[str, Field] = {
            "tokens": TextField([Token(token) for token in tokens]),
            # A sentence without a tree gets an empty field (lines with and without parses
            # share batches); the model decides its tree.
            "transitions": transitions_field(transitions or []),
        }
        if label is not None:
            fields["label"] = LabelField(label)
        fields["metadata"] = MetadataField({"tokens": tokens, "transitions_source": source})
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["tokens"].token_indexers = self._token_indexers  # type: ignore[attr-defined]
