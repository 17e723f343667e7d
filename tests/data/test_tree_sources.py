import pytest
from allennlp.common import Params

from spinn_allennlp.core.transitions import is_valid, transitions_to_string
from spinn_allennlp.data.tree_sources import TreeSource

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
