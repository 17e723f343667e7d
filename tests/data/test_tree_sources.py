import gzip
import json
import logging
import sys
from collections import Counter
from typing import List

import nltk
import pytest
import spacy
from allennlp.common import Params
from benepar.ptb_unescape import guess_space_after, ptb_unescape

from spinn_allennlp.data.binarization import binary_transitions
from spinn_allennlp.data.tree_sources import (
    INVALID_TREE,
    NO_TREE,
    BeneparTrees,
    GoldTrees,
    TreeSource,
    TreeSourceError,
    resolve_benepar_model,
)
from spinn_allennlp.data.tree_sources.benepar_trees import import_benepar
from spinn_core.transitions import (
    REDUCE,
    SHIFT,
    balanced_transitions,
    is_valid,
    parse_to_transitions,
    transitions_to_string,
)
from tools.testing.benepar import PARSES_SAMPLE as SAMPLE
from tools.testing.benepar import tiny_benepar

WORDS = ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize(
    "name,tree",
    [
        ("balanced", "( ( ( a b ) c ) ( d e ) )"),
        ("left_branching", "( ( ( ( a b ) c ) d ) e )"),
        ("right_branching", "( a ( b ( c ( d e ) ) ) )"),
    ],
)
def test_baseline_sources(name, tree):
    source = TreeSource.from_params(Params({"type": name}))
    assert source.name == name
    assert transitions_to_string(WORDS, source.transitions(WORDS)) == tree
    batch = source.transitions_batch([WORDS, ["one"], []])
    assert batch[1:] == [[0], []]
    for tokens, transitions in zip([WORDS, ["one"]], batch):
        assert is_valid(transitions, len(tokens))


def test_balanced_is_the_default():
    assert TreeSource.from_params(Params({})).name == "balanced"


# --- one sentence fails, the others go on ------------------------------------------------


class FailsOnBad(TreeSource):
    """A parser that breaks (its whole batch) on any sentence with the word "BAD" and builds a
    broken tree (SHIFTs only) for any sentence with "BROKEN"."""

    name = "fails_on_bad"

    def __init__(self) -> None:
        self.batches: List[int] = []

    def transitions_batch(self, sentences):
        self.batches.append(len(sentences))
        if any("BAD" in tokens for tokens in sentences):
            raise RuntimeError("parser crashed")
        return [
            [SHIFT] * len(tokens) if "BROKEN" in tokens else balanced_transitions(len(tokens))
            for tokens in sentences
        ]


def test_a_failing_sentence_costs_only_its_own_tree():
    source = FailsOnBad()
    sentences = [["a", "b"], ["c", "BAD", "d"], ["e", "BROKEN", "f"], ["g"], []]
    results = source.transitions_or_errors(sentences)
    assert results[0] == balanced_transitions(2) and results[3] == [SHIFT] and results[4] == []
    assert isinstance(results[1], TreeSourceError) and results[1].reason == NO_TREE
    assert "fails_on_bad failed: RuntimeError: parser crashed" in str(results[1])
    # A source's invalid tree never passes as a tree.
    assert isinstance(results[2], TreeSourceError) and results[2].reason == INVALID_TREE
    assert source.batches == [5, 1, 1, 1, 1, 1]  # the batch, then one at a time
    assert source.transitions_or_errors([["a"], ["b", "c"]]) == [[SHIFT], [SHIFT, SHIFT, REDUCE]]
    assert source.batches[-1] == 2


# --- gold ---------------------------------------------------------------------------------


def test_gold_trees_are_the_corpus_parses(tmp_path):
    source = TreeSource.from_params(Params({"type": "gold", "parse_files": [str(SAMPLE)]}))
    assert source.name == "gold"
    example = json.loads(SAMPLE.read_text().splitlines()[3])
    for side in ("sentence1", "sentence2"):
        tokens, transitions = parse_to_transitions(example[f"{side}_binary_parse"])
        assert source.transitions(tokens) == transitions
    with pytest.raises(TreeSourceError, match="not in the gold parse files"):
        source.transitions(["Not", "in", "SNLI", "."])
    # Without files, gold trees exist only where a line has its parse.
    with pytest.raises(TreeSourceError, match="the line has no binary parse"):
        GoldTrees().transitions(tokens)
    assert GoldTrees().transitions([]) == []


def test_gold_parse_files_of_plain_parses_with_broken_lines(tmp_path, caplog):
    lines = [
        "( ( A dog ) barks )",
        "( ( A dog ) barks",  # unbalanced
        '{"sentence1_binary_parse": "( A ( b c d ) )"}',  # not binary
        "{not json",
        "",
        "( Cats ( sleep . ) )",
    ]
    path = tmp_path / "parses.txt.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines))
    with caplog.at_level(logging.WARNING):
        source = GoldTrees([str(path)])
    assert sorted(source.table) == [("A", "dog", "barks"), ("Cats", "sleep", ".")]
    assert source.skipped == Counter({"malformed parse": 2})
    assert f"{path}:2: skipped: malformed parse" in caplog.text
    assert f"{path}:4: skipped: bad JSON" in caplog.text


# --- benepar ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_model():
    return str(tiny_benepar()[1])


@pytest.fixture(scope="module")
def sample_sentences():
    """The 40 distinct sentences of the sample: PTB tokens and labeled gold parses."""
    seen = {}
    for line in SAMPLE.read_text().splitlines():
        example = json.loads(line)
        for side in ("sentence1", "sentence2"):
            tokens, _ = parse_to_transitions(example[f"{side}_binary_parse"])
            seen.setdefault(tuple(tokens), example[f"{side}_parse"])
    return seen


def test_benepar_trees_through_both_public_apis(tiny_model, sample_sentences):
    """The tree source's trees are benepar's own, binarized: `benepar.Parser` (what the source
    uses) and the spaCy component give the same tree for each sentence."""
    source = TreeSource.from_params(Params({"type": "benepar", "model": tiny_model}))
    assert source.name == "benepar"
    sentences = [list(tokens) for tokens in sample_sentences][:12]
    results = source.transitions_batch(sentences)
    nlp = spacy.blank("en")
    nlp.add_pipe("benepar", config={"model": tiny_model})
    for tokens, transitions in zip(sentences, results):
        assert is_valid(transitions, len(tokens))
        words = ptb_unescape(tokens)
        doc = spacy.tokens.Doc(nlp.vocab, words=words, spaces=guess_space_after(tokens))
        doc[0].is_sent_start = True
        for token in doc[1:]:
            token.is_sent_start = False
        parsed = nlp.get_pipe("benepar")(doc)
        via_spacy = nltk.Tree.fromstring(f"(TOP {list(parsed.sents)[0]._.parse_string})")
        spacy_tokens, spacy_transitions = binary_transitions(via_spacy)
        assert len(spacy_tokens) == len(tokens) and spacy_transitions == transitions


def test_benepar_answers_every_kind_of_bad_sentence(tiny_model):
    source = BeneparTrees(model=tiny_model)
    assert source.max_words == 126  # the tiny model's encoder_max_len 128, less 2
    unseen = ["Zoë", "naïve", "東京", "😀", "xqzvkwj", "-LRB-", "e-mail", "''"]
    sentences = [["A", "dog", "barks", "."], ["dog"] * 300, ["a", "", "b"], unseen, [], ["One"]]
    results = source.transitions_or_errors(sentences)
    assert is_valid(results[0], 4) and is_valid(results[3], len(unseen))
    assert results[4] == [] and results[5] == [SHIFT]
    assert "sentence of 300 words; benepar model" in str(results[1])
    assert "takes at most 126" in str(results[1])
    assert "empty word (word 2)" in str(results[2])
    assert all(isinstance(results[i], TreeSourceError) for i in (1, 2))


def test_our_snli_model_is_found_by_name_and_parses(sample_sentences):
    """The committed model: found by name, loads, and its binarized trees are close to the
    Stanford parser's binary trees on real SNLI sentences."""
    path = resolve_benepar_model("benepar_snli_1pct")
    assert path.endswith("models/benepar_snli_1pct.pt")
    source = BeneparTrees()
    sentences = [list(tokens) for tokens in sample_sentences]
    results = source.transitions_batch(sentences)
    gold = [
        binary_transitions(nltk.Tree.fromstring(parse))[1] for parse in sample_sentences.values()
    ]
    same = sum(ours == theirs for ours, theirs in zip(results, gold))
    assert same >= len(sentences) // 2, same  # whole trees identical for half or more
    assert resolve_benepar_model("benepar_en3") == "benepar_en3"  # left for benepar to find
    with pytest.raises(ValueError, match="benepar model 'no_such_model' not found"):
        BeneparTrees(model="no_such_model").transitions(["a", "b"])


def test_the_benepar_source_without_benepar_names_the_extra(monkeypatch):
    """benepar is an optional dependency: without it, the source says what to install."""
    monkeypatch.setitem(sys.modules, "benepar", None)  # `import benepar` raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'spinn_allennlp\[benepar\]'"):
        import_benepar()
