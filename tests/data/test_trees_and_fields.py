from allennlp.data import Batch, Instance

from spinn_allennlp.data.fields import transitions_field
from spinn_allennlp.data.trees import readable_tree
from spinn_core.transitions import PAD, REDUCE, SHIFT, parse_to_transitions

S, R = SHIFT, REDUCE


def test_readable_tree_plain_and_padded_steps():
    tokens, transitions = parse_to_transitions("( ( the cat ) sat )")
    assert readable_tree(tokens, transitions + [PAD, PAD]) == "( ( the cat ) sat )"
    assert readable_tree([], []) == ""
    assert readable_tree(["one"], [S]) == "one"


def test_readable_tree_shows_the_sentence_over_left_padding():
    tokens = ["<p>", "<p>", "the", "cat"]
    forest = [S, S, S, S, R, PAD, PAD]  # pads stay under the sentence's tree
    assert readable_tree(tokens, forest, left_pad_token="<p>") == "( the cat )"
    merged = [S, S, R, S, R, S, R]  # a parser that built one tree over the pads too
    assert readable_tree(tokens, merged, left_pad_token="<p>") == "( ( ( <p> <p> ) the ) cat )"


def test_transitions_field_batches_with_minus_one_padding():
    instances = [
        Instance({"t": transitions_field([S])}),
        Instance({"t": transitions_field([S, S, R])}),
    ]
    tensor = Batch(instances).as_tensor_dict()["t"]
    assert tensor.tolist() == [[S, PAD, PAD], [S, S, R]]
