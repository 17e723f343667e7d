"""REDUCE types from labeled parses (typed REDUCE, NSHRDLU §3.3), on real SNLI parses."""

import json

import pytest

from spinn_allennlp.data.reduce_types import (
    SNLI_REDUCE_TYPES,
    MalformedTreeError,
    base_label,
    labeled_spans,
    reduce_labels,
    reduce_type_ids,
)
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import parse_to_transitions

SAMPLE = FIXTURES_ROOT / "pair_classification" / "snli" / "snli_sample.jsonl"


def test_a_real_parse_by_hand():
    # SNLI dev: "The sisters are hugging goodbye while holding to go packages after just
    # eating lunch."
    example = json.loads(SAMPLE.read_text().splitlines()[0])
    tokens, transitions = parse_to_transitions(example["sentence2_binary_parse"])
    words, spans = labeled_spans(example["sentence2_parse"])
    assert words == tokens
    labels = [label for label in reduce_labels(spans, transitions) if label is not None]
    # In post-order; spans the binarization made (a part of an n-ary constituent) take the
    # label of the constituent they are part of, and (S (VP ...)) over the same words is S.
    assert labels == [
        "NP",  # The sisters
        "VP",  # hugging goodbye: part of the VP "hugging goodbye while ..."
        "VP",  # go packages: part of the VP "go packages after ..."
        "VP",  # eating lunch
        "S",  # just eating lunch
        "PP",  # after just eating lunch
        "VP",  # go packages after just eating lunch
        "S",  # to go packages ... (S (VP to ...))
        "S",  # holding to go ...
        "PP",  # while holding ...
        "VP",  # hugging goodbye while ...
        "VP",  # are hugging ...
        "S",  # are hugging ... . : part of the S
        "S",  # the sentence
    ]


def test_every_sample_parse_gives_a_type_to_every_reduce():
    for line in SAMPLE.read_text().splitlines():
        example = json.loads(line)
        for side in ("sentence1", "sentence2"):
            tokens, transitions = parse_to_transitions(example[f"{side}_binary_parse"])
            words, spans = labeled_spans(example[f"{side}_parse"])
            assert words == tokens
            ids = reduce_type_ids(reduce_labels(spans, transitions), SNLI_REDUCE_TYPES)
            assert [i >= 0 for i in ids] == [t == 1 for t in transitions]
            assert max(ids) < len(SNLI_REDUCE_TYPES)


def test_unary_chains_take_the_outermost_label_and_root_the_last():
    # (S (VP ...)) over the same words: S; ROOT only where nothing else spans the words.
    _, spans = labeled_spans("(ROOT (S (VP (VB Go) (ADVP (RB home)))))")
    assert reduce_labels(spans, [0, 0, 1]) == [None, None, "S"]
    _, spans = labeled_spans("(ROOT (NN a) (NN b))")
    assert reduce_labels(spans, [0, 0, 1]) == [None, None, "ROOT"]
    assert base_label("NP-SBJ") == "NP" and base_label("-NONE-") == "-NONE-"
    assert reduce_type_ids([None, "FRAG", "NP"], SNLI_REDUCE_TYPES) == [-1, 7, 0]


@pytest.mark.parametrize(
    "tree", ["", "(ROOT (NP (DT a) (NN dog))", "(ROOT (NP (DT a)) (NN dog)))", "((DT a))", "(X)"]
)
def test_malformed_trees_raise(tree):
    with pytest.raises(MalformedTreeError):
        labeled_spans(tree)
