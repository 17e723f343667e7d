from typing import Any, Dict, Optional, Sequence

import torch
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer
from allennlp.data.fields import Field, LabelField, MetadataField, TensorField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from spinn_allennlp.data.dataset_readers import MalformedExampleError, TreeDatasetReader
from spinn_allennlp.data.dataset_readers.tree_dataset_reader import Sentence
from spinn_allennlp.data.fields import transitions_field
from spinn_allennlp.data.head_rules import HeadRules
from spinn_allennlp.data.labeled_trees import (
    MalformedTreeError,
    binary_tree_steps,
    parse_labeled_tree,
)
from spinn_allennlp.data.tree_sources import BalancedTrees, TreeSource
from spinn_allennlp.modules.tree_encoder import GOLD
from spinn_core.transitions import check_transitions

FINE_LABELS = ("very negative", "negative", "neutral", "positive", "very positive")
BINARY_LABELS = ("negative", "positive")
LABEL_NAMES = {"5-class": FINE_LABELS, "2-class": BINARY_LABELS}
NEUTRAL = 2
# A node without a label (a neutral phrase in the binary setting); ignored by loss and metrics.
UNLABELED = -1
# SST escapes "/" and "*" in words ("co-writer\/director"); raw text has the plain characters.
_UNESCAPE = {"\\/": "/", "\\*": "*"}


def sst_label(label: int, granularity: str) -> int:
    """SST's 0-4 label in the setting's classes: itself for 5-class; for 2-class 0-1 ->
    0 (negative), 3-4 -> 1 (positive) and 2 (neutral) -> UNLABELED."""
    if granularity == "5-class":
        return label
    return UNLABELED if label == NEUTRAL else int(label > NEUTRAL)


@DatasetReader.register("sst_trees")
class SstTreesReader(TreeDatasetReader):
    """Reads the Stanford Sentiment Treebank's PTB-format trees, `(3 (2 The) (4 (3 good) ...))`,
    one per line: the words, the binary tree as SHIFT/REDUCE transitions and the sentiment
    label of every node, all from the same line.

    `granularity`: `"5-class"` keeps SST's labels 0-4 (very negative ... very positive);
    `"2-class"` drops sentences whose root is neutral (counted in `dropped["neutral root"]`)
    and maps 0-1 to 0 (negative) and 3-4 to 1 (positive); neutral inner nodes (and words) are
    kept in the tree but left unlabelled (-1), so they take no part in the loss or the
    phrase-level metrics.

    With `dependencies`, each tree is also turned into a dependency tree by `HeadRules` (see
    `spinn_allennlp/data/head_rules.py`) for the Child-Sum Tree-LSTM; a word's node there spans
    the word's maximal projection in the constituency tree, whose label it gets.

    For raw text (`text_to_instance` with a string or tokens and no tree, as predictors call it)
    the tree comes from `tree_source` and there are no labels.

    Instance fields: `tokens` (`TextField`), `transitions` (`TensorField`, PAD -1),
    `node_labels` (`TensorField`, one label per transition step, i.e. per tree node in
    post-order; -1 = unlabelled and padding), `label` (the root's label; an int `LabelField`),
    with `dependencies` also `heads` (each word's head position, -1 for the root and padding)
    and `projection_labels` (per word), and `metadata` (`tokens`, `tree_source`).

    Malformed lines (unbalanced brackets, a node without a label, a label outside 0-4, a node
    with other than two children) are logged as file:line and counted, never raised.

    Registered as a `DatasetReader` with name "sst_trees".

    # Parameters

    granularity : `str`, optional (default = `"5-class"`)
        `"5-class"` or `"2-class"`.
    dependencies : `bool`, optional (default = `False`)
        Add `heads` and `projection_labels` (for a `DependencyTreeEncoder`).
    tree_source : `TreeSource`, optional (default = `BalancedTrees()`)
        Trees for raw text.
    token_indexers : `Dict[str, TokenIndexer]`, optional
        Default `{"tokens": SingleIdTokenIndexer()}`.
    **kwargs
        `tokenizer` (raw text only), `max_length`, `lowercase`: see `TreeDatasetReader`; the
        rest goes to `DatasetReader`.
    """

    def __init__(
        self,
        granularity: str = "5-class",
        dependencies: bool = False,
        tree_source: Optional[TreeSource] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        **kwargs,
    ) -> None:
        if kwargs.get("crop_pad_length") is not None:
            raise ValueError("sst_trees keeps every node's label: crop_pad_length is not supported")
        super().__init__(**kwargs)
        if granularity not in LABEL_NAMES:
            raise ValueError(
                f"granularity must be one of {sorted(LABEL_NAMES)}, got {granularity!r}"
            )
        self.granularity = granularity
        self.label_names = LABEL_NAMES[granularity]
        self._head_rules = HeadRules() if dependencies else None
        self._tree_source = tree_source or BalancedTrees()
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}

    def line_to_instance(self, line: str, line_number: int) -> Optional[Instance]:
        try:
            tree = parse_labeled_tree(line)
            tokens, transitions, nodes = binary_tree_steps(tree)
        except MalformedTreeError as error:
            raise MalformedExampleError(error.reason, error.detail) from error
        labels = []
        for node in nodes:
            if not node.label.isdigit():
                raise MalformedExampleError("bad label", f"{node.label!r} is not a number 0-4")
            label = int(node.label)
            if not 0 <= label <= 4:
                raise MalformedExampleError("label out of range", f"{label} is not in 0-4")
            labels.append(label)
        if self.granularity == "2-class" and labels[-1] == NEUTRAL:
            self.drop("neutral root")
            return None
        tokens = [_unescape(token) for token in tokens]
        self.check_length("sentence", tokens)
        return self.text_to_instance(
            tokens, transitions, [sst_label(label, self.granularity) for label in labels]
        )

    def text_to_instance(
        self,
        sentence: Sentence,
        transitions: Optional[Sequence[int]] = None,
        node_labels: Optional[Sequence[int]] = None,
    ) -> Instance:
        """One sentence: raw text or tokens, with its transitions (else the tree source's) and
        optionally a label per transition step in this reader's classes (-1 = none). Raises
        `MalformedExampleError` (a `ValueError`) for an empty sentence or transitions that are
        not one tree over the tokens."""
        tokens, _ = self.sentence_tokens_and_transitions("sentence", sentence)
        source = GOLD
        if transitions is None:
            transitions = self._tree_source.transitions(tokens)
            source = self._tree_source.name
        transitions = list(transitions)
        try:
            check_transitions(transitions, len(tokens))
        except ValueError as error:
            raise MalformedExampleError("invalid transitions", str(error)) from error
        fields: Dict[str, Field] = {
            "tokens": TextField([Token(token) for token in tokens]),
            "transitions": transitions_field(transitions),
        }
        metadata: Dict[str, Any] = {"tokens": tokens, "tree_source": source}
        if node_labels is not None:
            if len(node_labels) != len(transitions):
                raise MalformedExampleError(
                    "bad labels", f"{len(node_labels)} labels for {len(transitions)} nodes"
                )
            fields["node_labels"] = _long_field(node_labels)
            if node_labels[-1] != UNLABELED:
                fields["label"] = LabelField(int(node_labels[-1]), skip_indexing=True)
        if self._head_rules is not None:
            tree = self._head_rules.dependencies(tokens, transitions)
            fields["heads"] = _long_field(tree.heads)
            metadata["heads"] = tree.heads
            if node_labels is not None:
                fields["projection_labels"] = _long_field(
                    [node_labels[step] for step in tree.projections]
                )
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["tokens"].token_indexers = self._token_indexers  # type: ignore[attr-defined]


def _unescape(token: str) -> str:
    for escaped, plain in _UNESCAPE.items():
        token = token.replace(escaped, plain)
    return token


def _long_field(values: Sequence[int]) -> TensorField:
    return TensorField(torch.tensor(list(values), dtype=torch.long), padding_value=UNLABELED)
