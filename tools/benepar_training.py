"""Train a benepar 0.2.0 constituency parser on the labeled trees that ship with SNLI.

SNLI's ``sentence1_parse`` / ``sentence2_parse`` fields hold Stanford-parser trees in PTB
bracket format with a ``ROOT`` node on top.  This module turns them into a
``benepar.parse_chart.ChartParser`` (character LSTM + partitioned self-attention encoder, no
pretrained transformer, so nothing has to be downloaded), trains it, and saves it in the
single-file format that ``benepar.Parser(path)`` and spaCy's
``nlp.add_pipe("benepar", config={"model": path})`` load::

    torch.save({"config": parser.config, "state_dict": state_dict}, path)

Besides SNLI's labeled trees, a model can learn from a treebank of unlabeled bracketings:
SST's trees (:func:`read_sst_trees`) are binary, but their labels are sentiment (0-4), not
categories, and their words have no part-of-speech tags.  Such a tree's constituents all get
one label, :data:`BRACKET_LABEL`, and its words the tag :data:`UNKNOWN_TAG`, which takes no part
in the tag loss (:class:`TrainableChartParser`).  SNLI's trees can be made binary the same way
SNLI's own binary parses were (:func:`spinn_allennlp.data.binarization.binarize_labeled`, with
``@``-labeled nodes inside), so that every training tree is a binary tree of one convention.

Model selection can use the tree sources' measure instead of labeled F1 (``select_on=
"unlabeled"``): unlabeled bracket F1 of the binarized trees (the conventions of
``tools/parse_quality.py``), averaged over the dev sets (SNLI dev and held-out
bracketings).

``config`` holds the ``ChartParser`` keyword arguments (``tag_vocab``, ``label_vocab``,
``char_vocab`` and an ``hparams`` dict).  The weights may be stored as float16: benepar's loader
calls ``load_state_dict`` on a freshly built float32 model, and ``load_state_dict`` copies with
a dtype cast, so the loaded parser runs in float32 either way.

The module is deliberately free of AllenNLP imports (only benepar, nltk, numpy, torch and the
pure-Python bracket counts of ``spinn_core.transitions``).

Scoring (:func:`score_trees`) follows EVALB's ``COLLINS.prm`` conventions, reimplemented here:

* labeled brackets: one bracket per non-terminal node, ``(label, first word, last word + 1)``;
  pre-terminals (part-of-speech nodes) are not brackets;
* root labels ``TOP``, ``ROOT``, ``S1``, ``VROOT`` are not counted (the node right below them,
  e.g. the ``S`` over the whole sentence, is);
* words tagged ``,`` ``:`` ````` ``''`` ``.`` ``?`` ``!`` or ``-NONE-`` are removed before spans
  are computed, so brackets differing only in where punctuation attaches still match, and a
  bracket that covers nothing but such words disappears.  Which words are removed is decided
  by the GOLD tree's tags (EVALB decides per tree and then skips sentences whose lengths
  disagree; deciding from gold alone means a mistagged full stop never drops a sentence);
* function tags are stripped (``NP-SBJ`` -> ``NP``, ``NP=2`` -> ``NP``; labels starting with
  ``-`` are kept whole);
* ``ADVP`` and ``PRT`` count as the same label;
* brackets are matched as multisets: each gold bracket matches at most one predicted bracket
  (so unary chains with repeated labels such as ``(NP (NP ...))`` count n-versus-m as in EVALB),
  by ``spinn_core.tree_scores.bracket_counts``, the project's one bracket count;
* precision/recall/F1 are micro-averaged over the corpus (sum of matches over sum of brackets);
  they are fractions in [0, 1], not percentages.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import io
import json
import math
import time
from collections import Counter
from pathlib import Path
from typing import Callable, ClassVar, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import nltk
import numpy as np
import torch
from benepar import char_lstm, decode_chart, nkutil, parse_chart
from benepar.parse_base import BaseInputExample
from benepar.ptb_unescape import guess_space_after, ptb_unescape

from spinn_allennlp.data.binarization import binarize_labeled, binary_transitions, unbinarize
from spinn_allennlp.data.labeled_trees import LabeledTree, parse_labeled_tree
from spinn_core.tree_scores import BracketCounts, bracket_counts
from tools.parse_quality import ParseQuality

PARSE_FIELDS = ("sentence1_parse", "sentence2_parse")

# Labels benepar's own tree preprocessing strips from the top of a tree
# (decode_chart.collapse_unary_strip_pos); its parser always outputs a "TOP" root.
ROOT_LABELS = frozenset({"TOP", "ROOT", "S1", "VROOT"})

# The label of every constituent of an unlabeled bracketing (SST's trees), and the tag of its
# words: the tag takes no part in the tag loss (TrainableChartParser).
BRACKET_LABEL = "BRACKET"
UNKNOWN_TAG = "-UNKNOWN-"

# ChartParser architecture hyperparameters (every key ChartParser.__init__ reads).  The values
# are this project's choice for a small CPU-trainable English model, not benepar's defaults.
DEFAULT_HPARAMS: Dict[str, object] = {
    "use_chars_lstm": True,
    "use_pretrained": False,
    "pretrained_model": "",
    "use_encoder": True,
    "d_char_emb": 64,
    "char_lstm_input_dropout": 0.2,
    "d_model": 256,
    "num_layers": 4,
    "num_heads": 8,
    "d_kv": 32,
    "d_ff": 512,
    "encoder_max_len": 512,
    "morpho_emb_dropout": 0.2,
    "attention_dropout": 0.2,
    "relu_dropout": 0.1,
    "residual_dropout": 0.2,
    "d_label_hidden": 256,
    "predict_tags": True,
    "d_tag_hidden": 256,
    "tag_loss_scale": 5.0,
    "force_root_constituent": True,
}

# A model small enough to train in seconds (tests, smoke runs).
TINY_HPARAMS: Dict[str, object] = {
    **DEFAULT_HPARAMS,
    "d_char_emb": 16,
    "d_model": 32,
    "num_layers": 1,
    "num_heads": 2,
    "d_kv": 8,
    "d_ff": 32,
    "encoder_max_len": 128,
    "d_label_hidden": 32,
    "d_tag_hidden": 32,
}


@dataclasses.dataclass
class TrainSettings:
    """Optimisation settings (kept out of the saved model's hparams)."""

    batch_size: int = 64  # sentences per optimizer step
    learning_rate: float = 1e-3  # peak Adam learning rate
    warmup_steps: int = 160  # linear warm-up from 0 to learning_rate
    clip_grad_norm: float = 10.0  # 0 disables clipping
    weight_decay: float = 0.0
    checks_per_epoch: int = 2  # dev evaluations per pass over the training trees
    decay_factor: float = 0.5  # LR multiplier when dev F1 stops improving ...
    decay_patience: int = 3  # ... for this many consecutive checks
    min_learning_rate: float = 1e-5  # stop once decays would go below this
    max_epochs: int = 1000
    max_minutes: float = 0.0  # wall-clock budget for the training loop; 0 = none
    max_steps: int = 0  # 0 = no limit
    subbatch_max_tokens: int = 2000  # words per forward pass (longer batches are split)
    dev_eval_size: int = 0  # sentences used for the periodic checks; 0 = all of dev
    # What picks the best check: "labeled" (labeled F1 on dev) or "unlabeled" (unlabeled bracket
    # F1 of the binarized trees, the mean over dev and the bracketing dev set).
    select_on: str = "labeled"
    seed: int = 1

    def __post_init__(self) -> None:
        if self.select_on not in ("labeled", "unlabeled"):
            raise ValueError(f"select_on must be 'labeled' or 'unlabeled', got {self.select_on!r}")


# --------------------------------------------------------------------------------------------
# Trees and examples
# --------------------------------------------------------------------------------------------


def _open_lines(source: Union[str, Path, Iterable[str]]) -> Iterable[str]:
    if isinstance(source, (str, Path)):
        path = Path(source)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            yield from handle
    else:
        yield from source


def prepare_tree(tree: nltk.Tree) -> nltk.Tree:
    """Give ``tree`` the single ``TOP`` root that benepar uses.

    SNLI's ``(ROOT (S ...))`` becomes ``(TOP (S ...))``; a tree without a root node gets one.
    benepar's span extraction drops a one-child ``TOP``/``ROOT`` node either way, so this only
    makes gold trees look like the parser's output (which is always rooted in ``TOP``).
    """
    tree = tree.copy(deep=True)
    if tree.label() in ROOT_LABELS:
        tree.set_label("TOP")
        return tree
    return nltk.Tree("TOP", [tree])


def read_snli_trees(
    sources: Union[str, Path, Iterable[str], Sequence[Union[str, Path]]],
    fields: Sequence[str] = PARSE_FIELDS,
    dedupe: bool = True,
) -> List[nltk.Tree]:
    """Labeled trees from SNLI JSONL lines (a path, a ``.gz`` path, a list of paths or lines).

    Every pair contributes its ``sentence1_parse`` and ``sentence2_parse``.  With ``dedupe``,
    a sentence (its sequence of leaves) is kept once, the first time it is seen.  Trees are
    returned rooted in ``TOP`` (see :func:`prepare_tree`).
    """
    if isinstance(sources, (str, Path)):
        line_iters = [_open_lines(sources)]
    elif isinstance(sources, (list, tuple)) and all(
        isinstance(s, Path) or (isinstance(s, str) and not s.lstrip().startswith("{"))
        for s in sources
    ):
        line_iters = [_open_lines(s) for s in sources]  # several files
    else:
        line_iters = [_open_lines(sources)]  # type: ignore[arg-type]  # JSON lines themselves
    trees, seen = [], set()
    for lines in line_iters:
        for line in lines:
            line = line.strip()
            if not line:
                continue
            record = json.loads(line)
            for field in fields:
                text = record.get(field)
                if not text:
                    continue
                tree = nltk.Tree.fromstring(text)
                key = tuple(tree.leaves())
                if dedupe:
                    if key in seen:
                        continue
                    seen.add(key)
                trees.append(prepare_tree(tree))
    return trees


def bracketing_to_tree(tree: LabeledTree, label: str = BRACKET_LABEL) -> nltk.Tree:
    """An unlabeled bracketing (a :class:`LabeledTree` whose labels are not categories, such as
    SST's sentiment labels) as a benepar training tree: every phrase labeled ``label``, every
    word tagged :data:`UNKNOWN_TAG`, rooted in ``TOP``. Iterative."""
    done: List[nltk.Tree] = []
    pending: List[Tuple[LabeledTree, bool]] = [(tree, False)]
    while pending:
        node, children_done = pending.pop()
        if node.is_leaf:
            done.append(nltk.Tree(UNKNOWN_TAG, [node.word]))
        elif not children_done:
            pending.append((node, True))
            pending.extend((child, False) for child in reversed(node.children))
        else:
            children = done[len(done) - len(node.children) :]
            del done[len(done) - len(node.children) :]
            done.append(nltk.Tree(label, children))
    (result,) = done
    return nltk.Tree("TOP", [result])


def read_sst_trees(
    sources: Union[str, Path, Iterable[str], Sequence[Union[str, Path]]],
    label: str = BRACKET_LABEL,
    dedupe: bool = True,
) -> List[nltk.Tree]:
    """The bracketings of SST's PTB-format trees (``(3 (2 It) (4 ...))``, one per line; a
    path, a ``.gz`` path, a list of paths or the lines themselves) as benepar training trees
    (:func:`bracketing_to_tree`): the sentiment labels are dropped. Words are SST's tokens as
    they are (``-LRB-``, ``\\/``; a leaf of several words is one word joined by ``_``, as the
    SST reader reads it). With ``dedupe`` a sentence is kept once. A malformed line raises a
    ``ValueError`` that names it (``train.txt.gz:12: unbalanced brackets: ...``)."""
    named: List[Tuple[str, Iterable[str]]]
    if isinstance(sources, (str, Path)):
        named = [(Path(sources).name, _open_lines(sources))]
    elif isinstance(sources, (list, tuple)) and all(
        isinstance(s, Path) or (isinstance(s, str) and not s.lstrip().startswith("("))
        for s in sources
    ):
        named = [(Path(s).name, _open_lines(s)) for s in sources]  # several files
    else:
        named = [("line", _open_lines(sources))]  # type: ignore[arg-type]  # the lines themselves
    trees, seen = [], set()
    for name, lines in named:
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line:
                continue
            try:
                tree = bracketing_to_tree(parse_labeled_tree(line), label)
            except ValueError as error:
                raise ValueError(f"{name}:{number}: {error}") from error
            key = tuple(tree.leaves())
            if dedupe:
                if key in seen:
                    continue
                seen.add(key)
            trees.append(tree)
    return trees


def binarize_trees(trees: Sequence[nltk.Tree]) -> List[nltk.Tree]:
    """Each tree head-outward binarized with ``@``-labeled nodes inside
    (:func:`~spinn_allennlp.data.binarization.binarize_labeled`): the binary tree SNLI's own
    binary parse is, with labels."""
    return [binarize_labeled(tree) for tree in trees]


@dataclasses.dataclass
class TreeExample(BaseInputExample):
    """One sentence for benepar: unescaped words, guessed spacing, optional gold tree."""

    words: List[str]
    space_after: List[bool]
    tree: Optional[nltk.Tree] = None
    tagged: Optional[List[Tuple[str, str]]] = None  # (escaped leaf, tag); used without a tree

    @classmethod
    def from_tree(cls, tree: nltk.Tree) -> "TreeExample":
        leaves = tree.leaves()
        return cls(
            words=ptb_unescape(leaves),
            space_after=guess_space_after(leaves),
            tree=tree,
            tagged=tree.pos(),
        )

    def leaves(self):
        return [leaf for leaf, _ in self.pos()]

    def pos(self):
        if self.tree is not None:
            return self.tree.pos()
        return self.tagged

    def without_tree(self) -> "TreeExample":
        return dataclasses.replace(self, tree=None)


# --------------------------------------------------------------------------------------------
# Vocabularies and model
# --------------------------------------------------------------------------------------------


def build_vocabs(trees: Sequence[nltk.Tree]) -> Dict[str, dict]:
    """``tag_vocab``, ``label_vocab`` and ``char_vocab`` for ``ChartParser`` from training trees.

    ``label_vocab`` comes from ``ChartDecoder.build_vocab`` (collapsed unary chains such as
    ``S::VP`` are labels of their own; index 0 is the empty "not a constituent" label).
    ``char_vocab`` comes from ``RetokenizerForCharLSTM.build_vocab`` on the unescaped words;
    for Latin text it maps all 256 (or 512) low code points, so unseen accented letters get
    their own (untrained) id and anything else falls back to the unknown-character id 0.
    ``tag_vocab`` maps "UNK" to 0 and the training trees' part-of-speech tags to 1..n
    (:data:`UNKNOWN_TAG` is not one).
    """
    words = [ptb_unescape(tree.leaves()) for tree in trees]
    tags = sorted({tag for tree in trees for _, tag in tree.pos()} - {"UNK", UNKNOWN_TAG})
    return {
        "tag_vocab": {tag: i for i, tag in enumerate(["UNK"] + tags)},
        "label_vocab": decode_chart.ChartDecoder.build_vocab(trees),
        "char_vocab": char_lstm.RetokenizerForCharLSTM.build_vocab(words),
    }


class TrainableChartParser(parse_chart.ChartParser):
    """benepar's ``ChartParser``, except that a word tagged :data:`UNKNOWN_TAG` (a treebank
    without part-of-speech tags, such as SST) takes no part in the tag loss. Saved by
    :func:`save_parser`, it is a plain ``ChartParser`` file."""

    def encode(self, example):
        if example.tree is None or self.f_tag is None:
            return super().encode(example)
        tags = [tag for _, tag in example.pos()]
        if UNKNOWN_TAG not in tags:
            return super().encode(example)
        encoded = super().encode(example.without_tree())
        encoded["span_labels"] = torch.tensor(self.decoder.chart_from_tree(example.tree))
        known = [-100 if tag == UNKNOWN_TAG else self.tag_vocab[tag] for tag in tags]
        encoded["tag_labels"] = torch.tensor([-100] + known + [-100])
        return encoded


def build_parser(
    vocabs: Dict[str, dict],
    hparams: Optional[Dict[str, object]] = None,
) -> parse_chart.ChartParser:
    """A fresh :class:`TrainableChartParser`; ``hparams`` overrides entries of
    :data:`DEFAULT_HPARAMS`."""
    merged = dict(DEFAULT_HPARAMS)
    for key, value in (hparams or {}).items():
        if key not in DEFAULT_HPARAMS:
            raise KeyError(f"unknown benepar hparam {key!r}")
        merged[key] = value
    if not (merged["use_chars_lstm"] and merged["use_encoder"]) or merged["use_pretrained"]:
        raise ValueError(
            "only use_chars_lstm=True, use_encoder=True, use_pretrained=False "
            "works without downloading a pretrained transformer"
        )
    if int(merged["d_model"]) % 4 or int(merged["d_kv"]) % 2:  # type: ignore[call-overload]
        raise ValueError("d_model must be a multiple of 4 and d_kv even (partitioned halves)")
    return TrainableChartParser(
        tag_vocab=vocabs["tag_vocab"],
        label_vocab=vocabs["label_vocab"],
        char_vocab=vocabs["char_vocab"],
        hparams=nkutil.HParams(**merged),
    )


def count_parameters(parser: torch.nn.Module) -> int:
    return sum(p.numel() for p in parser.parameters())


def save_parser(parser: parse_chart.ChartParser, path: Union[str, Path], half: bool = True) -> int:
    """Write ``{"config", "state_dict"}`` as benepar's single-file loader expects.

    With ``half``, floating-point tensors are stored as float16 (benepar's loader upcasts them
    when it copies them into the float32 model).  Returns the file size in bytes.
    """
    state_dict = {
        name: (
            tensor.detach().cpu().half()
            if half and tensor.is_floating_point()
            else tensor.detach().cpu()
        ).clone()
        for name, tensor in parser.state_dict().items()
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save({"config": copy.deepcopy(parser.config), "state_dict": state_dict}, buffer)
    path.write_bytes(buffer.getvalue())
    return path.stat().st_size


def load_parser(path: Union[str, Path]) -> parse_chart.ChartParser:
    """Load a saved parser exactly the way ``benepar.Parser(path)`` does."""
    return parse_chart.ChartParser.from_trained(str(path))


# --------------------------------------------------------------------------------------------
# Scoring (EVALB-style labeled brackets; conventions in the module docstring)
# --------------------------------------------------------------------------------------------

DELETED_TAGS = frozenset({",", ":", "``", "''", ".", "?", "!", "-NONE-"})
EQUIVALENT_LABELS = {"PRT": "ADVP"}


def _canonical_label(label: str) -> str:
    if not label.startswith("-"):
        for i, char in enumerate(label):
            if char in "-=" and i > 0:
                label = label[:i]
                break
    return EQUIVALENT_LABELS.get(label, label)


def _is_preterminal(node) -> bool:
    return isinstance(node, nltk.Tree) and len(node) == 1 and isinstance(node[0], str)


def labeled_brackets(tree: nltk.Tree, keep: Optional[Sequence[bool]] = None) -> Counter:
    """Multiset of ``(label, start, end)`` brackets of ``tree`` under the scorer's conventions.

    ``keep[i]`` says whether word ``i`` counts; by default words whose own tag is in
    :data:`DELETED_TAGS` are dropped.
    """
    if keep is None:
        keep = [tag not in DELETED_TAGS for _, tag in tree.pos()]
    brackets: Counter = Counter()
    position = 0  # index into all words
    kept = 0  # index into kept words

    def visit(node) -> None:
        nonlocal position, kept
        if isinstance(node, str) or _is_preterminal(node):
            if keep[position]:
                kept += 1
            position += 1
            return
        start = kept
        for child in node:
            visit(child)
        if node.label() not in ROOT_LABELS and kept > start:
            brackets[(_canonical_label(node.label()), start, kept)] += 1

    visit(tree)
    if position != len(keep):
        raise ValueError("keep mask length does not match the tree's words")
    return brackets


@dataclasses.dataclass
class BracketScore(BracketCounts):
    """Labeled bracket counts (precision, recall and F1 as every bracket F1 of the project,
    with EVALB's score of 1 for a sentence without brackets on either side), plus exact
    matches and tag accuracy."""

    EMPTY: ClassVar[float] = 1.0

    sentences: int = 0
    exact: int = 0  # sentences whose bracket multisets are identical
    tags_correct: int = 0  # over non-deleted words
    tags_total: int = 0

    @property
    def exact_match(self) -> float:
        return self.exact / self.sentences if self.sentences else 0.0

    @property
    def tag_accuracy(self) -> float:
        return self.tags_correct / self.tags_total if self.tags_total else 0.0

    def as_dict(self) -> Dict[str, float]:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "exact_match": self.exact_match,
            "tag_accuracy": self.tag_accuracy,
            **dataclasses.asdict(self),
        }

    def __str__(self) -> str:
        return (
            f"P={100 * self.precision:.2f} R={100 * self.recall:.2f} "
            f"F1={100 * self.f1:.2f} exact={100 * self.exact_match:.2f} "
            f"tags={100 * self.tag_accuracy:.2f} ({self.sentences} sentences)"
        )


def score_tree(gold: nltk.Tree, predicted: nltk.Tree) -> BracketScore:
    gold_pos, predicted_pos = gold.pos(), predicted.pos()
    if [w for w, _ in gold_pos] != [w for w, _ in predicted_pos]:
        raise ValueError(f"trees have different words: {gold.leaves()} vs {predicted.leaves()}")
    keep = [tag not in DELETED_TAGS for _, tag in gold_pos]
    gold_brackets = labeled_brackets(gold, keep)
    predicted_brackets = labeled_brackets(predicted, keep)
    counts = bracket_counts(predicted_brackets, gold_brackets)
    tags_total = sum(keep)
    tags_correct = sum(k and g == p for k, (_, g), (_, p) in zip(keep, gold_pos, predicted_pos))
    return BracketScore(
        matched=counts.matched,
        gold=counts.gold,
        predicted=counts.predicted,
        sentences=1,
        exact=int(gold_brackets == predicted_brackets),
        tags_correct=tags_correct,
        tags_total=tags_total,
    )


def score_trees(gold: Sequence[nltk.Tree], predicted: Sequence[nltk.Tree]) -> BracketScore:
    """Corpus-level labeled bracket scores (micro-averaged)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold trees but {len(predicted)} predicted trees")
    total = BracketScore()
    for g, p in zip(gold, predicted):
        total += score_tree(g, p)
    return total


def parse_examples(
    parser: parse_chart.ChartParser,
    examples: Sequence[TreeExample],
    subbatch_max_tokens: int = 2000,
) -> List[nltk.Tree]:
    """The parser's trees of the examples' words (gold trees hidden)."""
    return list(
        parser.parse(
            [example.without_tree() for example in examples],
            subbatch_max_tokens=subbatch_max_tokens,
        )
    )


def evaluate(
    parser: parse_chart.ChartParser,
    examples: Sequence[TreeExample],
    subbatch_max_tokens: int = 2000,
) -> BracketScore:
    """Parse the examples' words (gold trees hidden) and score against the gold trees
    (labeled; the ``@`` nodes of a model trained on binarized trees are removed first,
    :func:`~spinn_allennlp.data.binarization.unbinarize`)."""
    predicted = parse_examples(parser, examples, subbatch_max_tokens)
    return score_trees([example.tree for example in examples], [unbinarize(t) for t in predicted])


def unlabeled_quality(gold: Sequence[nltk.Tree], predicted: Sequence[nltk.Tree]) -> ParseQuality:
    """The tree sources' measure (``tools/parse_quality.py``): both trees
    binarized as the benepar tree source binarizes (unary chains collapsed, head-outward), then
    unlabeled brackets compared. For SNLI's labeled trees the gold side is SNLI's own binary
    parse; for a binary bracketing, the bracketing."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold trees but {len(predicted)} predicted trees")
    quality = ParseQuality()
    for gold_tree, predicted_tree in zip(gold, predicted):
        gold_words, gold_transitions = binary_transitions(gold_tree)
        words, transitions = binary_transitions(predicted_tree)
        if words != gold_words:
            raise ValueError(f"trees have different words: {gold_words} vs {words}")
        quality.add(gold_transitions, transitions)
    return quality


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class TrainResult:
    parser: parse_chart.ChartParser  # holds the best weights (by periodic dev checks)
    best_dev: Optional[BracketScore]  # labeled scores on dev at the best check
    best_step: int
    steps: int
    epochs: float
    train_seconds: float
    history: List[Dict[str, float]]
    best_check: Optional[Dict[str, float]] = None  # the history entry of the best check


def _set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


def train_parser(
    train_trees: Sequence[nltk.Tree],
    dev_trees: Sequence[nltk.Tree] = (),
    hparams: Optional[Dict[str, object]] = None,
    settings: Optional[TrainSettings] = None,
    log: Callable[[str], None] = print,
    log_every: int = 20,
    on_new_best: Optional[Callable[[parse_chart.ChartParser, Optional[BracketScore]], None]] = None,
    bracket_dev_trees: Sequence[nltk.Tree] = (),
) -> TrainResult:
    """Train a ``ChartParser`` on ``train_trees``; keep the weights with the best dev checks.

    A check parses ``dev_trees`` (labeled trees: labeled F1 and, with ``select_on=
    "unlabeled"``, unlabeled bracket F1) and ``bracket_dev_trees`` (unlabeled bracketings, such
    as held-out SST trees: unlabeled bracket F1 only). The score that picks the best check is
    ``settings.select_on``'s: labeled F1 on dev, or the mean of the unlabeled bracket F1s
    (:func:`unlabeled_quality`) of the dev sets given.

    Schedule: Adam (betas 0.9/0.98), linear warm-up to ``learning_rate`` over
    ``warmup_steps``, then the LR is multiplied by ``decay_factor`` whenever the check score
    has not improved for ``decay_patience`` consecutive checks.  Training stops at
    ``max_minutes`` / ``max_steps`` / ``max_epochs``, or when the LR would drop below
    ``min_learning_rate``.  Without dev trees no checks happen and the last weights are kept.
    """
    settings = settings or TrainSettings()
    rng = np.random.default_rng(settings.seed)
    torch.manual_seed(settings.seed)

    vocabs = build_vocabs(train_trees)
    parser = build_parser(vocabs, hparams)
    train_examples = [TreeExample.from_tree(tree) for tree in train_trees]
    dev_examples = [TreeExample.from_tree(tree) for tree in dev_trees]
    if settings.dev_eval_size and len(dev_examples) > settings.dev_eval_size:
        chosen = np.random.default_rng(settings.seed + 1).choice(
            len(dev_examples), settings.dev_eval_size, replace=False
        )
        dev_examples = [dev_examples[i] for i in sorted(chosen)]
    bracket_examples = [TreeExample.from_tree(tree) for tree in bracket_dev_trees]
    if bracket_examples and settings.select_on != "unlabeled":
        raise ValueError("bracketing dev trees are scored unlabeled: use select_on='unlabeled'")
    checks = bool(dev_examples or bracket_examples)

    params = [p for p in parser.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(
        params, lr=0.0, betas=(0.9, 0.98), eps=1e-9, weight_decay=settings.weight_decay
    )
    clip = settings.clip_grad_norm if settings.clip_grad_norm > 0 else math.inf
    log(
        f"train {len(train_examples)} trees, dev checks on {len(dev_examples)} trees"
        + (f" and {len(bracket_examples)} bracketings" if bracket_examples else "")
        + ", "
        f"{count_parameters(parser):,} parameters, {len(vocabs['label_vocab'])} labels, "
        f"{len(vocabs['tag_vocab'])} tags"
    )

    steps_per_epoch = math.ceil(len(train_examples) / settings.batch_size)
    check_every = max(1, round(steps_per_epoch / max(1, settings.checks_per_epoch)))
    base_lr = settings.learning_rate
    start = time.time()
    step, best_step, bad_checks = 0, 0, 0
    best_dev: Optional[BracketScore] = None
    best_score: Optional[float] = None
    best_check: Optional[Dict[str, float]] = None
    best_state = None
    history: List[Dict[str, float]] = []
    stop_reason = None

    def out_of_time() -> bool:
        return bool(settings.max_minutes) and time.time() - start > 60 * settings.max_minutes

    def check() -> bool:
        """Dev check; returns False when the LR schedule says to stop."""
        nonlocal best_dev, best_state, best_step, bad_checks, base_lr, best_score, best_check
        t0 = time.time()
        entry: Dict[str, float] = {
            "step": step,
            "epoch": step / steps_per_epoch,
            "minutes": (time.time() - start) / 60,
            "lr": base_lr,
        }
        score: Optional[BracketScore] = None
        unlabeled: List[float] = []
        messages = []
        if dev_examples:
            predicted = parse_examples(parser, dev_examples, settings.subbatch_max_tokens)
            gold = [example.tree for example in dev_examples]
            score = score_trees(gold, [unbinarize(tree) for tree in predicted])
            entry["dev_f1"] = score.f1
            entry["dev_tag_accuracy"] = score.tag_accuracy
            messages.append(str(score))
            if settings.select_on == "unlabeled":
                entry["dev_unlabeled_f1"] = unlabeled_quality(gold, predicted).bracket_totals.f1
                unlabeled.append(entry["dev_unlabeled_f1"])
                messages.append(f"unlabeled F1={100 * entry['dev_unlabeled_f1']:.2f}")
        if bracket_examples:
            predicted = parse_examples(parser, bracket_examples, settings.subbatch_max_tokens)
            gold = [example.tree for example in bracket_examples]
            entry["bracket_dev_unlabeled_f1"] = unlabeled_quality(gold, predicted).bracket_totals.f1
            unlabeled.append(entry["bracket_dev_unlabeled_f1"])
            messages.append(
                f"bracketings: unlabeled F1={100 * entry['bracket_dev_unlabeled_f1']:.2f}"
            )
        if settings.select_on == "labeled":
            assert score is not None
            selection = score.f1
        else:
            selection = sum(unlabeled) / len(unlabeled)
            entry["selection_score"] = selection
        improved = best_score is None or selection > best_score
        history.append(entry)
        log(
            f"  dev step {step} epoch {step / steps_per_epoch:.2f}: {'; '.join(messages)} "
            f"[{time.time() - t0:.0f}s]{' *best*' if improved else ''}"
        )
        if improved:
            best_dev, best_step, bad_checks = score, step, 0
            best_score, best_check = selection, entry
            best_state = {k: v.detach().clone() for k, v in parser.state_dict().items()}
            if on_new_best is not None:
                on_new_best(parser, score)
            return True
        bad_checks += 1
        if step > settings.warmup_steps and bad_checks >= settings.decay_patience:
            bad_checks = 0
            if base_lr * settings.decay_factor < settings.min_learning_rate:
                return False
            base_lr *= settings.decay_factor
            log(f"  learning rate -> {base_lr:.2e}")
        return True

    parser.train()
    epoch = 0
    while stop_reason is None:
        if epoch >= settings.max_epochs:
            stop_reason = "max_epochs"
            break
        order = rng.permutation(len(train_examples))
        for first in range(0, len(order), settings.batch_size):
            batch = [train_examples[i] for i in order[first : first + settings.batch_size]]
            lr = base_lr * min(1.0, (step + 1) / max(1, settings.warmup_steps))
            _set_lr(optimizer, lr)
            optimizer.zero_grad()
            parser.train()
            loss_value = 0.0
            for _, subbatch in parser.encode_and_collate_subbatches(
                batch, subbatch_max_tokens=settings.subbatch_max_tokens
            ):
                loss = parser.compute_loss(subbatch)
                value = loss.item()
                loss_value += value
                if loss.requires_grad and value > 0:
                    loss.backward()
            grad_norm = float(torch.nn.utils.clip_grad_norm_(params, clip))
            optimizer.step()
            step += 1
            if step % log_every == 0:
                log(
                    f"step {step} epoch {step / steps_per_epoch:.2f} loss {loss_value:.3f} "
                    f"grad-norm {grad_norm:.2f} lr {lr:.2e} "
                    f"{(time.time() - start) / 60:.1f} min"
                )
            if checks and step % check_every == 0 and not check():
                stop_reason = "min_learning_rate"
                break
            if settings.max_steps and step >= settings.max_steps:
                stop_reason = "max_steps"
                break
            if out_of_time():
                stop_reason = "max_minutes"
                break
        epoch += 1

    if checks and (not history or history[-1]["step"] != step):
        check()
    train_seconds = time.time() - start
    log(
        f"stopped ({stop_reason}) after {step} steps, {step / steps_per_epoch:.2f} epochs, "
        f"{train_seconds / 60:.1f} min; best dev check at step {best_step}"
    )
    if best_state is not None:
        parser.load_state_dict(best_state)
    parser.eval()
    return TrainResult(
        parser=parser,
        best_dev=best_dev,
        best_step=best_step,
        steps=step,
        epochs=step / steps_per_epoch,
        train_seconds=train_seconds,
        history=history,
        best_check=best_check,
    )
