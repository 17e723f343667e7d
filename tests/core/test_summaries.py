"""Stack and buffer summaries for the tracker (NSHRDLU §3.1)."""

import random

import pytest
import torch

from spinn_core.compositions import registered_compositions
from spinn_core.output import GIVEN, PREDICTED
from spinn_core.policies import Given, Greedy, SoftStrengths
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch, policy_for_mode, saved_for_backward_bytes
from spinn_core.testing.reference import reference_spinn


def model_with_summaries(composition="treelstm", predict_transitions=True):
    torch.manual_seed(0)
    model = Spinn(
        5,
        4,
        tracking_dim=3,
        predict_transitions=predict_transitions,
        summary_dim=3,
        composition=composition,
    ).double()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(2.0)
    return model


def gradients(model):
    return [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("composition", registered_compositions())
@pytest.mark.parametrize("mode", [GIVEN, PREDICTED])
def test_batched_loop_equals_the_step_by_step_reference(composition, mode):
    """Outputs, parses and every gradient (the summary LSTMs' included) against
    ``reference_spinn``'s lists: a stack of (node, stack-LSTM state) and the buffer LSTM run
    over each sentence's words backwards."""
    model = model_with_summaries(composition)
    rng = random.Random(1)
    lengths = [7, 1, 12, 2, 9]
    inputs, mask, transitions = make_batch(lengths, 5, rng, "cpu", torch.float64)
    given = transitions if mode == GIVEN else None
    model.zero_grad()
    out = model(inputs, mask, given, policy=policy_for_mode(mode))
    out.sentence.pow(2).sum().backward()
    batched = gradients(model)
    model.zero_grad()
    references = []
    for b, n in enumerate(lengths):
        steps = 2 * n - 1
        reference = reference_spinn(
            model, inputs[b, :n], None if given is None else given[b, :steps].tolist()
        )
        assert out.transitions[b, :steps].tolist() == reference.transitions
        references.append(reference.sentence)
    torch.stack(references).pow(2).sum().backward()
    torch.testing.assert_close(out.sentence, torch.stack(references), atol=1e-10, rtol=0)
    for a, b in zip(batched, gradients(model)):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=0)
    assert model.summaries.stack.weight_ih.grad.abs().sum() > 0
    assert model.summaries.buffer.weight_ih_l0.grad.abs().sum() > 0


def test_batch_equals_single():
    model = model_with_summaries().eval()
    rng = random.Random(2)
    lengths = [7, 1, 12, 2, 30, 5]
    inputs, mask, _ = make_batch(lengths, 5, rng, "cpu", torch.float64)
    batch = model(inputs, mask, None, policy=Greedy(), return_nodes=True)
    for b, n in enumerate(lengths):
        single = model(inputs[b : b + 1, :n], mask[b : b + 1, :n], None, policy=Greedy())
        torch.testing.assert_close(batch.sentence[b : b + 1], single.sentence, atol=1e-10, rtol=0)
        steps = 2 * n - 1
        assert torch.equal(batch.transitions[b, :steps], single.transitions[0, :steps])


def test_saved_memory_is_linear_in_steps():
    def saved(num_words):
        torch.manual_seed(0)
        model = Spinn(16, 16, tracking_dim=8, predict_transitions=True, summary_dim=8)
        inputs, mask, transitions = make_batch([num_words] * 4, 16, random.Random(3), "cpu")

        def step():
            out = model(inputs, mask, transitions, policy=Given())
            return out.sentence.sum() + out.transition_logits.sum()

        return saved_for_backward_bytes(step)

    ratio = saved(100) / saved(25)
    assert 3.0 < ratio < 5.0, ratio


def test_needs_tracking_and_not_the_soft_stack():
    with pytest.raises(ValueError, match="tracking"):
        Spinn(5, 4, summary_dim=3)
    rng = random.Random(4)
    inputs, mask, _ = make_batch([4], 5, rng, "cpu", torch.float64)
    with pytest.raises(ValueError, match="soft stack"):
        model_with_summaries()(inputs, mask, None, policy=SoftStrengths())
