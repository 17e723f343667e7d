import pytest

from spinn_core.transitions import parse_to_transitions
from tools.parse_quality import ParseQuality, brackets


def transitions(parse):
    return parse_to_transitions(parse)[1]


def test_brackets_leave_out_words_and_the_whole_sentence():
    assert brackets(transitions("( ( a b ) ( c d ) )")) == {(0, 2), (2, 4)}
    assert brackets(transitions("( a ( b ( c d ) ) )")) == {(1, 4), (2, 4)}
    assert brackets(transitions("( a b )")) == set()
    assert brackets(transitions("a")) == set()


def test_scores_of_a_known_pair():
    gold = transitions("( ( a b ) ( c d ) )")  # S S R S S R R
    right = transitions("( a ( b ( c d ) ) )")  # S S S S R R R
    quality = ParseQuality()
    quality.add(gold, right)
    scores = quality.as_dict()
    assert scores["bracket_f1"] == scores["bracket_precision"] == scores["bracket_recall"] == 0.5
    assert scores["transition_accuracy"] == pytest.approx(5 / 7)
    assert scores["exact_tree_rate"] == 0.0 and scores["valid_tree_rate"] == 1.0
    assert scores["sentence_mean_f1"] == 0.5


def test_corpus_micro_average_invalid_trees_and_short_sentences():
    quality = ParseQuality()
    gold = transitions("( ( a b ) ( c d ) )")
    quality.add(gold, gold)  # 2 of 2 brackets
    quality.add(gold, [0, 0, 0, 0, 1, 1])  # invalid (one REDUCE short): no brackets
    quality.add(gold, None)  # no tree at all
    quality.add(transitions("( a b )"), transitions("( a b )"))  # no brackets to score
    scores = quality.as_dict()
    assert scores["matched_brackets"] == 2 and scores["gold_brackets"] == 6
    assert scores["predicted_brackets"] == 2
    assert scores["bracket_precision"] == 1.0 and scores["bracket_recall"] == pytest.approx(1 / 3)
    assert scores["bracket_f1"] == pytest.approx(0.5)
    assert scores["sentence_mean_f1"] == pytest.approx(1 / 3)  # 1, 0, 0; the 2-word one out
    assert scores["valid_tree_rate"] == 0.5 and scores["exact_tree_rate"] == 0.5
    assert scores["transition_accuracy"] == pytest.approx((7 + 3) / (3 * 7 + 3))


def test_gold_against_itself_is_perfect():
    quality = ParseQuality()
    for parse in ("( ( The cat ) ( sat . ) )", "( A ( ( very big ) dog ) )", "word"):
        quality.add(transitions(parse), transitions(parse))
    scores = quality.as_dict()
    assert scores["bracket_f1"] == scores["exact_tree_rate"] == 1.0
    assert scores["transition_accuracy"] == scores["valid_tree_rate"] == 1.0
