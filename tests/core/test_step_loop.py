"""The batched thin-stack loop (``Spinn.forward`` outside the level-wise path) against
Algorithm 1 written one sentence and one node at a time with Python lists
(``spinn_core.testing.reference_spinn``): same sentence vectors, nodes, transitions and
parser logits, and the same parameter gradients, for every variant, transition mode and both
ways through the loop (sparse: the reducing sentences only; static shapes: every sentence at
every step)."""

import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.batch import concat_padded
from spinn_core.output import GIVEN, PREDICTED
from spinn_core.policies import Greedy, Mixed
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch, policy_for_mode, reference_spinn

VARIANTS = {
    "pi_nt_sequential": dict(tracking_dim=0, levelwise=False),
    "pi": dict(tracking_dim=5),
    "spinn": dict(tracking_dim=5, predict_transitions=True),
    "treernn_spinn": dict(tracking_dim=5, predict_transitions=True, composition="treernn"),
}
CASES = [
    (variant, mode, sparse)
    for variant, options in VARIANTS.items()
    for mode in ([GIVEN, PREDICTED] if options.get("predict_transitions") else [GIVEN])
    for sparse in (True, False)
]


def grads_of(model):
    return {
        name: torch.zeros_like(p) if p.grad is None else p.grad.clone()
        for name, p in model.named_parameters()
    }


@pytest.mark.parametrize("variant,mode,sparse", CASES)
def test_loop_equals_one_sentence_at_a_time(variant, mode, sparse, device):
    """float64, where both differ only by rounding (~1e-15): 1e-10 claims equality. Lengths
    are mixed so that sentences end at different steps (the loop works on the running ones
    only, longest first) and include an empty sentence."""
    torch.manual_seed(0)
    rng = random.Random(11)
    model = Spinn(6, 5, **VARIANTS[variant]).double().to(device)
    model.static_shapes = not sparse
    if mode == PREDICTED:
        # A decisive parser that wants both moves often, illegal ones included, so that the
        # legality rules are exercised.
        with torch.no_grad():
            model.tracker.transition_classifier.weight.mul_(30.0)
    lengths = [7, 1, 12, 0, 2, 19, 5, 12]
    inputs, mask, transitions = make_batch(lengths, 6, rng, device, torch.float64)
    given = transitions if mode == GIVEN else None
    generator = torch.Generator().manual_seed(5)

    def weights_like(tensor):
        return torch.randn(tensor.shape, generator=generator, dtype=tensor.dtype).to(device)

    model.zero_grad()
    out = model(inputs, mask, given, policy=policy_for_mode(mode), return_nodes=True)
    steps = out.transitions.size(1)
    w_sentence, w_nodes = weights_like(out.sentence), weights_like(out.node_states)
    loss = (out.sentence * w_sentence).sum() + (out.node_states * w_nodes).sum()
    w_logits = None
    if out.transition_logits is not None:
        w_logits = weights_like(out.transition_logits)
        real = (out.transitions != tr.PAD).unsqueeze(-1)
        loss = loss + (out.transition_logits * w_logits * real).sum()
    loss.backward()
    batch_grads = grads_of(model)

    model.zero_grad()
    reference_loss = inputs.new_zeros(())
    for b, n in enumerate(lengths):
        if n == 0:
            assert torch.equal(out.sentence[b], torch.zeros_like(out.sentence[b]))
            assert (out.transitions[b] == tr.PAD).all()
            continue
        gold = None if given is None else given[b, : 2 * n - 1].tolist()
        ref = reference_spinn(model, inputs[b, :n], gold)
        t = len(ref.transitions)
        assert out.transitions[b, :t].tolist() == ref.transitions
        assert (out.transitions[b, t:] == tr.PAD).all() and t <= steps
        torch.testing.assert_close(out.sentence[b], ref.sentence, atol=1e-10, rtol=0)
        torch.testing.assert_close(out.node_states[b, :t], ref.node_states, atol=1e-10, rtol=0)
        reference_loss = (
            reference_loss
            + (ref.sentence * w_sentence[b]).sum()
            + (ref.node_states * w_nodes[b, :t]).sum()
        )
        if ref.transition_logits is not None:
            assert out.transition_logits is not None and w_logits is not None
            torch.testing.assert_close(
                out.transition_logits[b, :t], ref.transition_logits, atol=1e-10, rtol=0
            )
            reference_loss = reference_loss + (ref.transition_logits * w_logits[b, :t]).sum()
    reference_loss.backward()
    for name, grad in grads_of(model).items():
        torch.testing.assert_close(batch_grads[name], grad, atol=1e-10, rtol=0, msg=name)


def test_inputs_on_the_device_with_transitions_elsewhere(device):
    """Given transitions may come on another device than the inputs (e.g. built on the CPU)."""
    torch.manual_seed(0)
    model = Spinn(4, 3, tracking_dim=2).to(device)
    inputs, mask, transitions = make_batch([3, 5], 4, random.Random(0), "cpu")
    out = model(inputs.to(device), mask.to(device), transitions)
    assert torch.equal(out.transitions.cpu(), transitions)


# --- several batches in one call (premises and hypotheses) -----------------------------------


TOGETHER_CASES = [
    ("pi_nt", GIVEN),
    ("pi_nt_sequential", GIVEN),
    ("pi", GIVEN),
    ("pi", "default_tree"),
    ("spinn", GIVEN),
    ("spinn", PREDICTED),
]


@pytest.mark.parametrize("variant,mode", TOGETHER_CASES)
def test_two_batches_in_one_call_equal_two_calls(variant, mode, device):
    """Premises and hypotheses padded to one width and encoded together, then split: each
    part equals its own call (float64, 1e-10), with its own number of steps."""
    options = dict(tracking_dim=0) if variant == "pi_nt" else VARIANTS[variant]
    torch.manual_seed(0)
    rng = random.Random(12)
    model = Spinn(6, 5, **options).double().to(device).eval()
    parts = [
        make_batch([4, 9, 1, 6], 6, rng, device, torch.float64),
        make_batch([3, 2, 0, 5], 6, rng, device, torch.float64),
    ]
    run_mode = GIVEN if mode == "default_tree" else mode

    def given(transitions):
        return transitions if mode == GIVEN else None

    together = model(
        concat_padded([inputs for inputs, _, _ in parts], 0.0),
        concat_padded([mask for _, mask, _ in parts], False),
        None if mode != GIVEN else concat_padded([t for _, _, t in parts], tr.PAD),
        policy=policy_for_mode(run_mode),
        return_nodes=True,
    ).split([4, 4])
    for (inputs, mask, transitions), joint in zip(parts, together):
        alone = model(
            inputs, mask, given(transitions), policy=policy_for_mode(run_mode), return_nodes=True
        )
        assert torch.equal(joint.transitions, alone.transitions)
        assert joint.mode == alone.mode
        for name in ("sentence", "node_states", "node_hidden", "transition_logits"):
            expected = getattr(alone, name)
            if expected is None:
                assert getattr(joint, name) is None
            else:
                torch.testing.assert_close(getattr(joint, name), expected, atol=1e-10, rtol=0)


def test_mixed_mode_follows_its_own_parse_past_the_given_steps():
    """Mixed mode runs 2n - 1 steps whatever was given: where the given sequence has ended
    (PAD), the parser's own legal choice is followed and recorded."""
    torch.manual_seed(0)
    model = Spinn(6, 5, tracking_dim=4, predict_transitions=True).eval()
    inputs, mask, _ = make_batch([5, 9, 2], 6, random.Random(13))
    nothing_given = torch.full((3, 1), tr.PAD)
    mixed = model(inputs, mask, nothing_given, policy=Mixed(0.0))
    assert torch.equal(mixed.transitions, model(inputs, mask, policy=Greedy()).transitions)
