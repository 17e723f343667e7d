"""`encode_together`: several sentence batches through one encoder call."""

import random

import pytest
import torch
from allennlp.modules.seq2vec_encoders import LstmSeq2VecEncoder

from spinn_allennlp.modules import SpinnEncoder
from spinn_allennlp.modules.tree_encoder import encode_together
from spinn_allennlp.testing import make_batch


def two_batches(dim, dtype=torch.float64):
    rng = random.Random(3)
    return [
        make_batch([5, 2, 8], dim, rng, "cpu", dtype),
        make_batch([3, 1, 4], dim, rng, "cpu", dtype),
    ]


@pytest.mark.parametrize("with_transitions", [True, False])
def test_tree_encoder_together_equals_separately(with_transitions):
    torch.manual_seed(0)
    encoder = SpinnEncoder(6, 5, tracking_dim=3, predict_transitions=True).double().eval()
    batches = [
        (inputs, mask, transitions if with_transitions else None)
        for inputs, mask, transitions in two_batches(6)
    ]
    together = encode_together(encoder, batches)
    for (inputs, mask, transitions), (vectors, output) in zip(batches, together):
        alone = encoder.encode(inputs, mask, transitions)
        torch.testing.assert_close(vectors, alone.sentence, atol=1e-10, rtol=0)
        assert output is not None and torch.equal(output.transitions, alone.transitions)
        torch.testing.assert_close(
            output.transition_logits, alone.transition_logits, atol=1e-10, rtol=0
        )


def test_plain_seq2vec_encoder_together_equals_separately():
    torch.manual_seed(0)
    encoder = LstmSeq2VecEncoder(6, 5).double().eval()
    batches = two_batches(6)
    for (inputs, mask, _), (vectors, output) in zip(batches, encode_together(encoder, batches)):
        assert output is None
        torch.testing.assert_close(vectors, encoder(inputs, mask), atol=1e-10, rtol=0)


def test_batches_with_and_without_transitions_are_encoded_separately():
    """A parser would follow its own trees for one batch and the given ones for the other:
    one call cannot do both, so each batch gets its own."""
    torch.manual_seed(0)
    encoder = SpinnEncoder(6, 5, tracking_dim=3, predict_transitions=True).double().train()
    (x1, m1, t1), (x2, m2, _) = two_batches(6)
    (_, given), (_, predicted) = encode_together(encoder, [(x1, m1, t1), (x2, m2, None)])
    assert given is not None and given.mode == "given" and torch.equal(given.transitions, t1)
    assert predicted is not None and predicted.mode == "predicted"


def test_training_batch_norm_sees_every_batch_at_once():
    """What the docstring says changes in training: the projection's batch norm takes its
    statistics over the words of all batches together, and updates its running mean once."""
    torch.manual_seed(0)
    encoder = SpinnEncoder(6, 5, tracking_dim=3, projection_batch_norm=True).double().train()
    batches = two_batches(6)
    words = torch.cat([inputs[mask] for inputs, mask, _ in batches])
    expected = 0.1 * encoder.spinn.projection.linear(words).mean(dim=0)  # momentum 0.1, from 0
    encode_together(encoder, batches)
    running_mean = encoder.spinn.projection.batch_norm.running_mean
    torch.testing.assert_close(running_mean, expected.detach(), atol=1e-12, rtol=0)
