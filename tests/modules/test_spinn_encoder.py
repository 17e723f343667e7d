import pytest
import torch
from allennlp.common import Params
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.core.output import GIVEN, MIXED, PREDICTED
from spinn_allennlp.modules import SpinnEncoder, TreeEncoder


def test_from_params_with_allennlp_names():
    encoder = Seq2VecEncoder.from_params(
        Params({"type": "spinn", "input_dim": 30, "hidden_dim": 20})
    )
    assert isinstance(encoder, SpinnEncoder) and isinstance(encoder, TreeEncoder)
    assert encoder.get_input_dim() == 30 and encoder.get_output_dim() == 20
    assert encoder.spinn.tracker is None and not encoder.has_parser  # SPINN-PI-NT by default
    inputs = torch.randn(3, 4, 30)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    assert encoder(inputs, mask).shape == (3, 20)


def test_forward_is_the_sentence_of_encode():
    torch.manual_seed(0)
    encoder = SpinnEncoder(5, 4, tracking_dim=3).eval()
    inputs, mask = torch.randn(2, 3, 5), torch.tensor([[1, 1, 1], [1, 1, 0]]).bool()
    transitions = torch.tensor([[0, 0, 1, 0, 1], [0, 0, 1, -1, -1]])
    output = encoder.encode(inputs, mask, transitions, return_nodes=True)
    assert torch.equal(encoder(inputs, mask, transitions), output.sentence)
    assert output.node_states.shape == (2, 5, 8) and output.mode == GIVEN


def test_transition_mode_policy():
    plain = SpinnEncoder(4, 3, tracking_dim=2)
    parser = SpinnEncoder(4, 3, tracking_dim=2, predict_transitions=True)
    scheduled = SpinnEncoder(
        4, 3, tracking_dim=2, predict_transitions=True, self_transition_prob=0.3
    )
    gold_at_test = SpinnEncoder(
        4, 3, tracking_dim=2, predict_transitions=True, parse_at_test_time=False
    )
    assert parser.has_parser and not plain.has_parser
    assert plain.transition_mode(False) == GIVEN  # the balanced default tree
    assert parser.transition_mode(False) == PREDICTED
    assert parser.train().transition_mode(True) == GIVEN
    assert parser.eval().transition_mode(True) == PREDICTED
    assert scheduled.train().transition_mode(True) == MIXED
    assert gold_at_test.eval().transition_mode(True) == GIVEN


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="tracking"):
        SpinnEncoder(4, 3, predict_transitions=True)
    with pytest.raises(ValueError, match="composition"):
        SpinnEncoder(4, 3, composition="gru")
    with pytest.raises(ValueError, match="self_transition_prob"):
        SpinnEncoder(4, 3, tracking_dim=2, self_transition_prob=0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        SpinnEncoder(4, 3, tracking_dim=2, predict_transitions=True, self_transition_prob=2.0)
