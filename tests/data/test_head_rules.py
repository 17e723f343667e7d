"""Head rules: dependency trees from binary constituency trees."""

import random

import pytest

from spinn_allennlp.data.head_rules import AUX, NOUN, PREP, VERB, HeadRules, PosLexicon
from spinn_allennlp.data.labeled_trees import binary_tree_steps, parse_labeled_tree
from spinn_allennlp.testing import FIXTURES_ROOT, random_transitions
from spinn_core.transitions import (
    InvalidTransitionsError,
    node_spans,
    parse_to_transitions,
)

RULES = HeadRules()


def heads_of(parse):
    tokens, transitions = parse_to_transitions(parse)
    heads = RULES.dependencies(tokens, transitions).heads
    return {word: tokens[head] if head >= 0 else "ROOT" for word, head in zip(tokens, heads)}


@pytest.mark.parametrize(
    "parse, expected",
    [
        (  # auxiliary gives way to the verb; determiners and punctuation depend
            "( ( A man ) ( ( is ( playing ( a guitar ) ) ) . ) )",
            {"A": "man", "man": "playing", "is": "playing", "playing": "ROOT", "a": "guitar",
             "guitar": "playing", ".": "playing"},
        ),
        (  # copula: the adjective heads
            "( ( The movie ) ( ( is ( very good ) ) . ) )",
            {"The": "movie", "movie": "good", "is": "good", "very": "good", "good": "ROOT",
             ".": "good"},
        ),
        (  # prepositions head their objects; PPs modify
            "( ( A ( group ( of kids ) ) ) ( is ( playing ( in ( a yard ) ) ) ) )",
            {"A": "group", "group": "playing", "of": "group", "kids": "of", "is": "playing",
             "playing": "ROOT", "in": "playing", "a": "yard", "yard": "in"},
        ),
        (  # "to" + verb: the verb heads, the clause modifies; leftmost of two verbs heads
            "( ( He ( wants ( to go ) ) ) . )",
            {"He": "wants", "wants": "ROOT", "to": "go", "go": "wants", ".": "wants"},
        ),
        (  # "'s" after a pronoun is "is"
            "( It ( ( 's ( a ( lovely film ) ) ) . ) )",
            {"It": "film", "'s": "film", "a": "film", "lovely": "film", "film": "ROOT",
             ".": "film"},
        ),
    ],
)  # fmt: skip
def test_head_table_on_examples(parse, expected):
    assert heads_of(parse) == expected


def subtree_spans(heads):
    """(first, last) word of each word's subtree in the dependency tree."""
    spans = []
    for word in range(len(heads)):
        subtree = {word}
        while True:
            grown = subtree | {w for w, h in enumerate(heads) if h in subtree}
            if grown == subtree:
                break
            subtree = grown
        spans.append((min(subtree), max(subtree)))
    return spans


def test_every_binary_tree_gives_one_projective_tree_matching_its_constituents():
    """On random binary trees over real SST sentences: one root, no cycle, and each word's
    dependency subtree is exactly the constituent its projection step pushed (so the
    dependency tree is projective and every node has a constituent's label)."""
    rng = random.Random(0)
    lines = (FIXTURES_ROOT / "classification" / "sst" / "sst_sample.txt").read_text().splitlines()
    for line in lines:
        tokens, gold, _ = binary_tree_steps(parse_labeled_tree(line))
        for transitions in (gold, random_transitions(len(tokens), rng)):
            tree = RULES.dependencies(tokens, transitions)
            assert tree.heads.count(-1) == 1
            spans = node_spans(transitions)
            assert subtree_spans(tree.heads) == [spans[step] for step in tree.projections]


def test_lexicon_and_fallback_rules():
    lexicon = PosLexicon()
    assert lexicon.tag("dog") == "NN" and lexicon.tag("Dog") == "NN"
    assert lexicon.tag("unfathomably") == "RB" and lexicon.tag("blorping") == "VBG"
    assert lexicon.tag("1984") == "CD" and lexicon.tag("--") == ":"
    assert lexicon.tag("Zyxwv") == "NNP" and lexicon.tag("zyxwv") == "NN"
    assert lexicon.word_classes(["is", "playing", "in", "a", "can"]) == [
        AUX,
        VERB,
        PREP,
        "DET",
        AUX,
    ]
    assert lexicon.word_classes(["man"]) == [NOUN]


def test_invalid_trees_raise():
    with pytest.raises(InvalidTransitionsError):
        RULES.dependencies(["a", "b"], [0, 0])


def test_lexicon_file_errors_name_the_line(tmp_path):
    path = tmp_path / "lexicon.tsv"
    path.write_text("# comment\ndog\tNN\ncat NN\n")
    with pytest.raises(ValueError, match="lexicon.tsv:3"):
        PosLexicon(path)
