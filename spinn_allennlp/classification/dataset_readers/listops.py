from typing import Any, Dict, List, Optional

from allennlp.data import DatasetReader, Instance, Token, TokenIndexer
from allennlp.data.fields import Field, LabelField, MetadataField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from spinn_allennlp.classification.listops import (
    MalformedExpressionError,
    bracketed,
    evaluate,
    operator_last_bracketed,
    parse_tokens,
)
from spinn_allennlp.data.dataset_readers import (
    MalformedExampleError,
    TreeDatasetReader,
    string_field,
)
from spinn_allennlp.data.fields import transitions_field
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules
from spinn_core.transitions import MalformedParseError, parse_to_transitions

TREE_SHAPES = ("gold", "operator_last")


@DatasetReader.register("listops")
class ListOpsReader(TreeDatasetReader):
    """Reads ListOps (Nangia and Bowman 2018) lines, `label<TAB>bracketed expression`, as in
    the published `test_d20s.tsv` and the files `scripts/make_listops.py` writes:

        9<TAB>( ( ( [MAX 2 ) 9 ) ] )

    The tokens are the symbols other than brackets (`[MAX`, `2`, `9`, `]`: 15 kinds); the
    brackets are the gold binary tree (each list folded left to right), whose post-order gives
    the gold transitions. Lines whose label is not the expression's value, whose tokens are not
    one expression, or whose brackets are not a binary tree over the tokens are logged and
    counted as skipped (see `TreeDatasetReader`).

    An expression without brackets, `[MAX 2 [MIN 4 7 ] 0 ]` (what a user types), gets the gold
    tree its lists imply, the one a published line's brackets give.

    Instance fields: `tokens` (`TextField`), `transitions` (`TensorField` of SHIFT/REDUCE,
    padded with -1; when `gold_trees`), `label` (`LabelField`, "0"-"9"), `metadata` (`tokens`).

    Registered as a `DatasetReader` with name "listops".

    # Parameters

    gold_trees : `bool`, optional (default = `True`)
        Give the gold transitions to the model. A model whose encoder has a parser learns from
        them (or, with a latent parser, only reports how its own trees compare); without them
        an encoder without a parser composes over its default (balanced) tree.
    tree_shape : `str`, optional (default = `"gold"`)
        The trees given with `gold_trees`: `"gold"`, the file's brackets, or
        `"operator_last"`, each list's arguments and `]` folded left to right and the operator
        joined last (`classification.listops.operator_last_bracketed`), so that a TreeLSTM
        can be trained on a grouping a latent parser chose. The file's brackets are checked
        either way.
    token_indexers : `Dict[str, TokenIndexer]`, optional
        Default `{"tokens": SingleIdTokenIndexer()}`.
    **kwargs
        `max_length` (skip longer lines, counted): see `TreeDatasetReader`; the rest goes to
        `DatasetReader` (`max_instances`, ...).
    """

    def __init__(
        self,
        gold_trees: bool = True,
        tree_shape: str = "gold",
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        with configuration_errors():
            rules.check_listops_trees(tree_shape, TREE_SHAPES, gold_trees)
        self._gold_trees = gold_trees
        self._tree_shape = tree_shape
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}

    def line_to_instance(self, line: str, line_number: int) -> Optional[Instance]:
        fields = line.split("\t")
        if len(fields) != 2:
            raise MalformedExampleError("bad line", f"expected label<TAB>expression: {line!r}")
        label, text = fields
        instance = self.text_to_instance(text, label.strip())
        self.check_length("expression", instance["metadata"]["tokens"])  # type: ignore[index]
        return instance

    @property
    def gives_gold_trees(self) -> bool:
        """Whether the transitions of its instances are the gold trees (`gold_trees` with the
        `"gold"` shape)."""
        return self._gold_trees and self._tree_shape == "gold"

    def example_to_instance(self, example: Dict[str, Any], use_label: bool = True) -> Instance:
        """The instance of a JSON object as a predictor receives it: `{"sentence": "[MAX 2 [MIN
        4 7 ] 0 ]"}`, bracketed or not, with an optional `"label"` (a string or an integer;
        checked against the expression's value unless `use_label` is false, then ignored).
        Raises `MalformedExampleError` (a `ValueError`) for what is missing or malformed."""
        expression = string_field(example, ["sentence"], required=True)
        assert expression is not None  # required
        label = example.get("label") if use_label else None
        if isinstance(label, bool) or not isinstance(label, (str, int, type(None))):
            raise MalformedExampleError("bad field", "label must be a string or an integer")
        return self.text_to_instance(expression, None if label is None else str(label))

    def text_to_instance(self, expression: str, label: Optional[str] = None) -> Instance:
        """One instance of a bracketed (or plain, space-separated) expression. Raises
        `MalformedExampleError` (a `ValueError`) for what is not one ListOps expression, a
        bracketing that is not a binary tree over its tokens, or a wrong label."""
        symbols = expression.split()
        try:
            parsed = parse_tokens(symbols)
        except MalformedExpressionError as error:
            raise MalformedExampleError("malformed expression", str(error)) from error
        tokens: List[str] = [s for s in symbols if s not in ("(", ")")]
        fields: Dict[str, Field] = {"tokens": TextField([Token(t) for t in tokens])}
        metadata: Dict[str, Any] = {"tokens": tokens}
        if self._gold_trees:
            if "(" not in symbols and ")" not in symbols:
                expression = bracketed(parsed)  # the gold tree the lists imply
            try:
                tree_tokens, transitions = parse_to_transitions(expression)
            except MalformedParseError as error:
                raise MalformedExampleError("malformed parse", str(error)) from error
            if tree_tokens != tokens:  # the parser drops brackets around single items only
                raise MalformedExampleError("malformed parse", "brackets do not cover the tokens")
            if self._tree_shape == "operator_last":
                _, transitions = parse_to_transitions(operator_last_bracketed(parsed))
            fields["transitions"] = transitions_field(transitions)
        if label is not None:
            value = evaluate(parsed)
            if label != str(value):
                raise MalformedExampleError(
                    "wrong label", f"label {label!r}, but the expression's value is {value}"
                )
            fields["label"] = LabelField(label)
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["tokens"].token_indexers = self._token_indexers  # type: ignore[attr-defined]
