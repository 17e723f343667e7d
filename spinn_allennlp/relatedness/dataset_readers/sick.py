import gzip
import logging
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import torch
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer
from allennlp.data.fields import Field, LabelField, MetadataField, TensorField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer

from spinn_allennlp.data.dataset_readers import MalformedExampleError, TreeDatasetReader
from spinn_allennlp.data.dataset_readers.tree_dataset_reader import Sentence
from spinn_allennlp.data.fields import transitions_field
from spinn_allennlp.data.head_rules import ROOT, HeadRules
from spinn_allennlp.data.paths import expand_path
from spinn_allennlp.data.tree_sources import BalancedTrees, TreeSource
from spinn_core.transitions import check_transitions

logger = logging.getLogger(__name__)

# SICK.txt's columns, in order.
COLUMNS = (
    "pair_ID",
    "sentence_A",
    "sentence_B",
    "entailment_label",
    "relatedness_score",
    "entailment_AB",
    "entailment_BA",
    "sentence_A_original",
    "sentence_B_original",
    "sentence_A_dataset",
    "sentence_B_dataset",
    "SemEval_set",
)
SPLITS = ("TRAIN", "TRIAL", "TEST")
ENTAILMENT_LABELS = {
    "ENTAILMENT": "entailment",
    "NEUTRAL": "neutral",
    "CONTRADICTION": "contradiction",
}
TARGETS = ("relatedness", "entailment")
# Sentences sent to a tree source at once.
TREE_BATCH_SIZE = 256


@DatasetReader.register("sick")
class SickReader(TreeDatasetReader):
    """Reads SICK (Marelli et al. 2014) from the tab-separated `SICK.txt` (all 9,840 pairs, with
    a header): sentence A as `premise`, sentence B as `hypothesis`, and either the relatedness
    score (1-5, Tai et al. §4.2) or the entailment label (SICK-E, for the NLI model `spinn_nli`).

    SICK.txt holds every split, told apart by its `SemEval_set` column: a path names the split
    after a `#` — `SICK.txt#TRAIN`, `SICK.txt#TRIAL` (the development set) or `SICK.txt#TEST`;
    rows of other splits are passed over. A path without `#` reads every row.

    SICK has no parses: each sentence is tokenized (`tokenizer`, default "ptb_spacy") and gets
    its binary tree from `tree_source` (balanced by default; a parser such as the benepar or
    SPINN sources from the tree-source issue). Before yielding instances the reader collects
    the split's sentences and asks the source for all their trees in batches, once per
    sentence (a parser is much faster in batches); trees are kept for later reads. With
    `dependencies` each tree also becomes a dependency tree by `HeadRules`, for the Child-Sum
    Tree-LSTM.

    Instance fields: `premise`, `hypothesis` (`TextField`), `premise_transitions`,
    `hypothesis_transitions` (`TensorField`, PAD -1), with `dependencies` `premise_heads`,
    `hypothesis_heads` (head position per word, -1 for the root and padding), then
    `relatedness` (a float `TensorField`) or `label` (`LabelField`: entailment, neutral,
    contradiction), and `metadata` (`premise_tokens`, `hypothesis_tokens`, `pair_id`, `split`,
    `tree_source`).

    Malformed rows (missing columns, a score that is not a number in 1-5, an unknown
    entailment label or split, an empty sentence) are logged as file:line and counted.

    Registered as a `DatasetReader` with name "sick".

    # Parameters

    target : `str`, optional (default = `"relatedness"`)
        `"relatedness"` or `"entailment"`.
    tree_source : `TreeSource`, optional (default = `BalancedTrees()`)
    dependencies : `bool`, optional (default = `False`)
        Add head-rule dependency trees (`premise_heads`, `hypothesis_heads`).
    token_indexers : `Dict[str, TokenIndexer]`, optional
        Default `{"tokens": SingleIdTokenIndexer()}`.
    **kwargs
        `tokenizer`, `max_length`, `lowercase`: see `TreeDatasetReader`; the rest goes to
        `DatasetReader`.
    """

    def __init__(
        self,
        target: str = "relatedness",
        tree_source: Optional[TreeSource] = None,
        dependencies: bool = False,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
        self.target = target
        self._tree_source = tree_source or BalancedTrees()
        self._head_rules = HeadRules() if dependencies else None
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._split: Optional[str] = None
        self._trees: Dict[Tuple[str, ...], List[int]] = {}

    def _read(self, file_path) -> Iterable[Instance]:
        path, _, split = str(file_path).partition("#")
        if split and split not in SPLITS:
            raise ValueError(f"{file_path}: the split after '#' must be one of {SPLITS}")
        self._split = split or None
        self._prefetch_trees(path)
        yield from super()._read(path)

    def _prefetch_trees(self, path: str) -> None:
        """Trees for every sentence of the split, from the tree source in batches."""
        sentences: Dict[Tuple[str, ...], None] = {}
        local_path = expand_path(path)
        opener = gzip.open if local_path.endswith(".gz") else open
        with opener(local_path, "rb") as data_file:
            for line in data_file:
                columns = line.decode("utf-8", errors="replace").rstrip("\r\n").split("\t")
                if len(columns) != len(COLUMNS) or columns[0] == COLUMNS[0]:
                    continue  # the header and malformed rows (reported when read)
                if self._split is not None and columns[-1] != self._split:
                    continue
                for text in columns[1:3]:
                    if text.strip():
                        sentences[tuple(self._tokens(text))] = None
        missing = [tokens for tokens in sentences if tokens not in self._trees]
        for start in range(0, len(missing), TREE_BATCH_SIZE):
            chunk = missing[start : start + TREE_BATCH_SIZE]
            for tokens, transitions in zip(chunk, self._tree_source.transitions_batch(chunk)):
                self._trees[tokens] = list(transitions)
        if missing:
            logger.info("%s: %d trees from %s", path, len(missing), self._tree_source.name)

    def _tokens(self, text: str, name: str = "sentence") -> List[str]:
        return self.sentence_tokens_and_transitions(name, text)[0]

    def line_to_instance(self, line: str, line_number: int) -> Optional[Instance]:
        columns = line.split("\t")
        if columns[0] == COLUMNS[0]:
            return None  # the header
        if len(columns) != len(COLUMNS):
            raise MalformedExampleError(
                "missing columns", f"{len(columns)} columns, expected {len(COLUMNS)}"
            )
        row = dict(zip(COLUMNS, columns))
        if row["SemEval_set"] not in SPLITS:
            raise MalformedExampleError("unknown split", repr(row["SemEval_set"]))
        if self._split is not None and row["SemEval_set"] != self._split:
            return None
        if self.target == "relatedness":
            try:
                score = float(row["relatedness_score"])
            except ValueError as error:
                raise MalformedExampleError("bad relatedness score", str(error)) from error
            if not 1.0 <= score <= 5.0:
                raise MalformedExampleError("bad relatedness score", f"{score} is not in 1-5")
            target: Any = score
        else:
            if row["entailment_label"] not in ENTAILMENT_LABELS:
                raise MalformedExampleError("unknown label", repr(row["entailment_label"]))
            target = ENTAILMENT_LABELS[row["entailment_label"]]
        for side in ("A", "B"):
            tokens = self._tokens(row[f"sentence_{side}"], f"sentence_{side}")
            self.check_length(f"sentence_{side}", tokens)
        instance = self.text_to_instance(
            row["sentence_A"], row["sentence_B"], target, row["pair_ID"]
        )
        instance.fields["metadata"].metadata["split"] = row["SemEval_set"]  # type: ignore[attr-defined]
        return instance

    def text_to_instance(
        self,
        premise: Sentence,
        hypothesis: Sentence,
        target: Any = None,
        pair_id: Optional[str] = None,
    ) -> Instance:
        """One pair of raw sentences (or token lists); `target` is a relatedness score or an
        entailment label name, per the reader's `target`. Raises `MalformedExampleError` (a
        `ValueError`) for an empty sentence or a tree source that gives no valid tree."""
        fields: Dict[str, Field] = {}
        metadata: Dict[str, Any] = {"tree_source": self._tree_source.name}
        for side, sentence in (("premise", premise), ("hypothesis", hypothesis)):
            tokens, _ = self.sentence_tokens_and_transitions(side, sentence)
            transitions = self._tree(tokens)
            fields[side] = TextField([Token(token) for token in tokens])
            fields[f"{side}_transitions"] = transitions_field(transitions)
            if self._head_rules is not None:
                heads = self._head_rules.dependencies(tokens, transitions).heads
                fields[f"{side}_heads"] = TensorField(
                    torch.tensor(heads, dtype=torch.long), padding_value=ROOT
                )
            metadata[f"{side}_tokens"] = tokens
        if target is not None:
            if self.target == "relatedness":
                fields["relatedness"] = TensorField(torch.tensor(float(target)))
            else:
                if target not in ENTAILMENT_LABELS.values():
                    raise MalformedExampleError("unknown label", repr(target))
                fields["label"] = LabelField(target)
        if pair_id is not None:
            metadata["pair_id"] = pair_id
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def _tree(self, tokens: Sequence[str]) -> List[int]:
        key = tuple(tokens)
        if key not in self._trees:
            self._trees[key] = list(self._tree_source.transitions(list(tokens)))
        transitions = self._trees[key]
        try:
            check_transitions(transitions, len(tokens))
        except ValueError as error:
            raise MalformedExampleError(
                "invalid tree from the tree source", f"{self._tree_source.name}: {error}"
            ) from error
        return transitions

    def apply_token_indexers(self, instance: Instance) -> None:
        for side in ("premise", "hypothesis"):
            instance.fields[side].token_indexers = self._token_indexers  # type: ignore[attr-defined]
