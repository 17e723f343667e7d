"""The registered Child-Sum Tree-LSTM encoder."""

import torch
from allennlp.common import Params
from allennlp.modules import Seq2VecEncoder

from spinn_allennlp.modules import ChildSumTreeLSTMEncoder, DependencyTreeEncoder


def test_registered_and_without_heads_a_chain():
    encoder = Seq2VecEncoder.from_params(
        Params({"type": "child_sum_tree_lstm", "input_dim": 4, "hidden_dim": 3})
    )
    assert isinstance(encoder, ChildSumTreeLSTMEncoder) and isinstance(
        encoder, DependencyTreeEncoder
    )
    assert (encoder.get_input_dim(), encoder.get_output_dim()) == (4, 3)
    inputs = torch.randn(2, 5, 4)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    chain = torch.tensor([[1, 2, 3, 4, -1], [1, 2, -1, -1, -1]])
    torch.testing.assert_close(encoder(inputs, mask), encoder(inputs, mask, chain))
    star = torch.tensor([[-1, 0, 0, 0, 0], [-1, 0, 0, -1, -1]])
    output = encoder.encode(inputs, mask, star, return_nodes=True)
    assert output.node_hidden.shape == (2, 5, 3) and output.heads.tolist() == star.tolist()
    torch.testing.assert_close(output.sentence, output.node_hidden[:, 0])
