"""Typed REDUCE (NSHRDLU §3.3): the type's embedding in the composition, given types followed,
predicted ones where the parser leads, batching that changes nothing."""

import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.output import GIVEN, PREDICTED, SOFT
from spinn_core.policies import Greedy, Mixed
from spinn_core.spinn import Spinn
from spinn_core.supervision import parser_types, reduce_type_loss
from spinn_core.testing import make_batch, policy_for_mode
from spinn_core.testing.reference import reference_spinn

NUM_TYPES = 4


def typed_model(predict_transitions=True):
    torch.manual_seed(0)
    model = Spinn(
        6,
        5,
        tracking_dim=4,
        predict_transitions=predict_transitions,
        num_reduce_types=NUM_TYPES,
        type_dim=3,
    ).double()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(2.0)
    return model


def batch_with_types(lengths, seed=0):
    rng = random.Random(seed)
    inputs, mask, transitions = make_batch(lengths, 6, rng, "cpu", torch.float64)
    generator = torch.Generator().manual_seed(seed)
    types = torch.randint(0, NUM_TYPES, transitions.shape, generator=generator)
    return inputs, mask, transitions, torch.where(transitions == tr.REDUCE, types, tr.PAD)


@pytest.mark.parametrize("mode", [GIVEN, PREDICTED])
def test_batched_loop_equals_the_step_by_step_reference(mode):
    """Given types with given transitions; the classifier's types with its own parse."""
    model = typed_model()
    lengths = [7, 1, 12, 2, 9]
    inputs, mask, transitions, types = batch_with_types(lengths)
    given = mode == GIVEN
    out = model(
        inputs,
        mask,
        transitions if given else None,
        policy=policy_for_mode(mode),
        reduce_types=types if given else None,
        return_nodes=True,
    )
    for b, n in enumerate(lengths):
        steps = 2 * n - 1
        reference = reference_spinn(
            model,
            inputs[b, :n],
            transitions[b, :steps].tolist() if given else None,
            types[b, :steps].tolist() if given else None,
        )
        torch.testing.assert_close(out.sentence[b], reference.sentence, atol=1e-10, rtol=0)
        torch.testing.assert_close(
            out.node_states[b, :steps], reference.node_states, atol=1e-10, rtol=0
        )
        assert out.transitions[b, :steps].tolist() == reference.transitions
        assert out.reduce_types[b, :steps].tolist() == reference.reduce_types
    if given:
        assert torch.equal(out.reduce_types, types[:, : out.reduce_types.size(1)])


def test_the_type_changes_the_composition():
    model = typed_model()
    inputs, mask, transitions, types = batch_with_types([6, 9])
    first = model(inputs, mask, transitions, reduce_types=types).sentence
    other = torch.where(types >= 0, (types + 1) % NUM_TYPES, types)
    second = model(inputs, mask, transitions, reduce_types=other).sentence
    assert (first - second).abs().max() > 1e-3


@pytest.mark.parametrize("mode", [GIVEN, PREDICTED, SOFT])
def test_batch_equals_single(mode):
    model = typed_model().eval()
    lengths = [7, 1, 12, 2, 30, 5]
    inputs, mask, transitions, types = batch_with_types(lengths, seed=1)
    given = mode == GIVEN
    batch = model(
        inputs,
        mask,
        transitions if given else None,
        policy=policy_for_mode(mode),
        reduce_types=types,
    )
    for b, n in enumerate(lengths):
        single = model(
            inputs[b : b + 1, :n],
            mask[b : b + 1, :n],
            transitions[b : b + 1] if given else None,
            policy=policy_for_mode(mode),
            reduce_types=types[b : b + 1],
        )
        steps = 2 * n - 1
        torch.testing.assert_close(batch.sentence[b : b + 1], single.sentence, atol=1e-10, rtol=0)
        assert torch.equal(batch.reduce_types[b, :steps], single.reduce_types[0, :steps])
        torch.testing.assert_close(
            batch.reduce_type_logits[b, :steps],
            single.reduce_type_logits[0, :steps],
            atol=1e-10,
            rtol=0,
        )


def test_mixed_mode_takes_given_types_where_it_follows_given_transitions():
    model = typed_model()
    inputs, mask, transitions, types = batch_with_types([8, 11])
    teacher = model(inputs, mask, transitions, policy=Mixed(0.0), reduce_types=types)
    assert torch.equal(teacher.reduce_types, types[:, : teacher.reduce_types.size(1)])
    own = model(inputs, mask, transitions, policy=Mixed(1.0), reduce_types=types)
    predicted = model(inputs, mask, None, policy=Greedy())
    assert torch.equal(own.reduce_types, predicted.reduce_types)


def test_the_type_loss_trains_the_type_classifier():
    model = typed_model()
    inputs, mask, transitions, types = batch_with_types([8, 11, 3])
    out = model(inputs, mask, transitions, reduce_types=types)
    loss = reduce_type_loss(out, types)
    assert loss.item() > 0
    loss.backward()
    assert model.type_classifier.weight.grad.abs().sum() > 0
    assert parser_types(out).shape == out.reduce_type_logits.shape[:2]


def test_without_a_type_classifier_types_must_be_given():
    model = typed_model(predict_transitions=False)
    inputs, mask, transitions, types = batch_with_types([5])
    model(inputs, mask, transitions, reduce_types=types)
    with pytest.raises(ValueError, match="reduce_types"):
        model(inputs, mask, transitions)
    with pytest.raises(ValueError, match="tracking"):
        Spinn(6, 5, num_reduce_types=3)


def test_reduce_types_of_the_wrong_shape_are_named():
    """One row of types per sentence, one type per step: a flattened or mis-batched tensor
    is refused with its shape, not an index error deep in the loop."""
    model = typed_model(predict_transitions=False)
    inputs, mask, transitions, types = batch_with_types([5, 3])
    with pytest.raises(ValueError, match=r"reduce_types must have shape \(batch = 2"):
        model(inputs, mask, transitions, reduce_types=types.flatten())
    with pytest.raises(ValueError, match=r"reduce_types must have shape \(batch = 2"):
        model(inputs, mask, transitions, reduce_types=types[:1])
