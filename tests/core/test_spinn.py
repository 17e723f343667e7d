"""The SPINN core against the paper's claims: PI-NT is a TreeLSTM (§3.6), batching changes
nothing, predicted parses are always trees, and the thin stack's memory is linear in T."""

import gc
import random
import weakref

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.output import GIVEN, PREDICTED
from spinn_core.policies import Given, Greedy, Mixed
from spinn_core.spinn import Spinn
from spinn_core.testing import (
    make_batch,
    pad_batch,
    policy_for_mode,
    random_tree,
    recording_tapes,
    recursive_tree_lstm,
    saved_for_backward_bytes,
)

VARIANTS = {
    "pi_nt": dict(tracking_dim=0),  # composed level by level
    "pi_nt_sequential": dict(tracking_dim=0, levelwise=False),  # the thin-stack loop
    "pi": dict(tracking_dim=5),
    "spinn": dict(tracking_dim=5, predict_transitions=True),
    "treernn_spinn": dict(tracking_dim=5, predict_transitions=True, composition="treernn"),
    "grc_spinn": dict(tracking_dim=5, predict_transitions=True, composition="grc"),
}


# --- §3.6: SPINN-PI-NT computes exactly a TreeLSTM --------------------------------------


def grads_of(model):
    # A one-word tree never composes: its composition gradient is None (or zero) there.
    return [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("levelwise", [False, True])
def test_pi_nt_equals_recursive_tree_lstm_outputs_and_gradients(levelwise):
    rng = random.Random(0)
    torch.manual_seed(0)
    model = Spinn(input_dim=7, hidden_dim=6, levelwise=levelwise).double()
    for _ in range(100):
        n = rng.randint(1, 40)
        tree = random_tree([str(i) for i in range(n)], rng)
        _, transitions = tr.tree_to_transitions(tree)
        words = torch.randn(n, 7, dtype=torch.float64)

        model.zero_grad()
        thin_stack = model(
            words.unsqueeze(0), torch.ones(1, n, dtype=torch.bool), torch.tensor([transitions])
        ).sentence[0]
        thin_stack.pow(2).sum().backward()
        thin_grads = grads_of(model)

        model.zero_grad()
        recursive = recursive_tree_lstm(model, words, tree)
        recursive.pow(2).sum().backward()
        recursive_grads = grads_of(model)

        # float64: the two differ only by rounding (~1e-15 here); 1e-10 claims equality.
        torch.testing.assert_close(thin_stack, recursive, atol=1e-10, rtol=0)
        for a, b in zip(thin_grads, recursive_grads):
            torch.testing.assert_close(a, b, atol=1e-10, rtol=0)


def test_gradients_match_finite_differences():
    torch.manual_seed(0)
    rng = random.Random(3)
    model = Spinn(4, 3, tracking_dim=2).double()
    inputs, mask, transitions = make_batch([5, 3, 1], 4, rng, "cpu", torch.float64)
    inputs.requires_grad_()
    torch.autograd.gradcheck(lambda x: model(x, mask, transitions).sentence, (inputs,))


# --- batch consistency --------------------------------------------------------------------


@pytest.mark.parametrize(
    "variant,mode",
    [
        (variant, mode)
        for variant, options in VARIANTS.items()
        for mode in (
            [GIVEN, PREDICTED, "default_tree"]
            if options.get("predict_transitions")
            else [GIVEN, "default_tree"]
        )
    ],
)
def test_batch_equals_single(variant, mode, device):
    """No padding leaks into a sentence: an exactness claim, so float64 (a batch of one and a
    batch of six run different BLAS kernels, whose float32 rounding depends on the CPU), where
    rounding is ~1e-15 and 1e-10 claims equality. Predicted parses must be identical."""
    torch.manual_seed(0)
    rng = random.Random(1)
    model = Spinn(input_dim=9, hidden_dim=8, **VARIANTS[variant]).double().to(device).eval()
    lengths = [7, 1, 12, 2, 30, 5]
    inputs, mask, transitions = make_batch(lengths, 9, rng, device, torch.float64)
    run_mode = GIVEN if mode == "default_tree" else mode
    given = None if mode == "default_tree" else transitions
    batch = model(inputs, mask, given, policy=policy_for_mode(run_mode), return_nodes=True)
    for b, n in enumerate(lengths):
        single = model(
            inputs[b : b + 1, :n],
            mask[b : b + 1, :n],
            None if given is None else given[b : b + 1],
            policy=policy_for_mode(run_mode),
            return_nodes=True,
        )
        steps = 2 * n - 1
        torch.testing.assert_close(batch.sentence[b : b + 1], single.sentence, atol=1e-10, rtol=0)
        assert torch.equal(batch.transitions[b, :steps], single.transitions[0, :steps])
        assert (batch.transitions[b, steps:] == tr.PAD).all()
        torch.testing.assert_close(
            batch.node_states[b, :steps], single.node_states[0, :steps], atol=1e-10, rtol=0
        )
        if batch.transition_logits is not None:
            torch.testing.assert_close(
                batch.transition_logits[b, :steps],
                single.transition_logits[0, :steps],
                atol=1e-10,
                rtol=0,
            )


def test_given_transitions_are_followed_and_nodes_are_post_order(device):
    torch.manual_seed(0)
    model = Spinn(4, 3).to(device)
    tokens, transitions = tr.parse_to_transitions("( ( the cat ) ( sat down ) )")
    inputs = torch.randn(1, 4, 4, device=device)
    out = model(
        inputs,
        torch.ones(1, 4, dtype=torch.bool, device=device),
        torch.tensor([transitions], device=device),
        return_nodes=True,
    )
    assert out.transitions[0].tolist() == transitions
    # The last node is the root, i.e. the sentence vector; the first is the word "the".
    torch.testing.assert_close(out.node_hidden[0, -1], out.sentence[0])
    leaf = model.projection(inputs, torch.ones(1, 4, dtype=torch.bool, device=device))[0, :3]
    torch.testing.assert_close(out.node_hidden[0, 0], leaf)


# --- predicted transitions always build a tree --------------------------------------------


def assert_all_valid(out, lengths):
    for b, n in enumerate(lengths):
        followed = [t for t in out.transitions[b].tolist() if t != tr.PAD]
        tr.check_transitions(followed, n)


def train_parser_briefly(model, rng):
    """A few steps of transition loss towards right-branching trees, so the classifier's
    predictions are no longer near-uniform noise."""
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(30):
        lengths = [rng.randint(1, 20) for _ in range(8)]
        inputs, mask, _ = make_batch(lengths, model.input_dim, rng, "cpu")
        gold = pad_batch([tr.right_branching_transitions(n) for n in lengths], tr.PAD)
        out = model(inputs, mask, gold, policy=Given())
        steps = gold != tr.PAD
        loss = torch.nn.functional.cross_entropy(out.transition_logits[steps], gold[steps])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


@pytest.mark.parametrize("bias", [None, "shift", "reduce", "trained"])
def test_predicted_transitions_always_form_a_tree(bias, device):
    torch.manual_seed(0)
    rng = random.Random(2)
    model = Spinn(6, 5, tracking_dim=4, predict_transitions=True)
    if bias == "trained":
        first_loss = train_parser_briefly(model, rng)
        assert first_loss < 0.4  # it did learn something
    elif bias is not None:
        # A parser that always wants one move: legality must still give a tree.
        with torch.no_grad():
            model.tracker.transition_classifier.bias.copy_(
                torch.tensor([100.0, -100.0] if bias == "shift" else [-100.0, 100.0])
            )
    model = model.to(device).eval()
    for _ in range(10):
        lengths = [rng.randint(1, 60) for _ in range(rng.randint(1, 16))]
        inputs, mask, _ = make_batch(lengths, 6, rng, device)
        out = model(inputs, mask, policy=Greedy())
        assert_all_valid(out, lengths)
        if bias == "shift":
            assert all(
                out.transitions[b].tolist()[: 2 * n - 1] == tr.right_branching_transitions(n)
                for b, n in enumerate(lengths)
            )
        if bias == "trained":
            agree = [
                out.transitions[b, : 2 * n - 1].tolist() == tr.right_branching_transitions(n)
                for b, n in enumerate(lengths)
            ]
            assert sum(agree) >= len(agree) // 2


@pytest.mark.parametrize("prob", [0.0, 0.5, 1.0])
def test_mixed_mode(prob):
    torch.manual_seed(0)
    rng = random.Random(4)
    model = Spinn(6, 5, tracking_dim=4, predict_transitions=True)
    lengths = [rng.randint(1, 30) for _ in range(12)]
    inputs, mask, gold = make_batch(lengths, 6, rng, "cpu")
    out = model(inputs, mask, gold, policy=Mixed(prob))
    assert_all_valid(out, lengths)
    if prob == 0.0:
        assert torch.equal(out.transitions, gold)
    if prob == 1.0:
        assert torch.equal(out.transitions, model(inputs, mask, policy=Greedy()).transitions)


# --- small and odd inputs -----------------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_one_and_two_word_sentences(variant, device):
    torch.manual_seed(0)
    model = Spinn(4, 3, **VARIANTS[variant]).to(device).eval()
    inputs = torch.randn(2, 2, 4, device=device)
    mask = torch.tensor([[True, False], [True, True]], device=device)
    modes = [GIVEN, PREDICTED] if model.has_parser else [GIVEN]
    for mode in modes:
        given = (
            torch.tensor(
                [[tr.SHIFT, tr.PAD, tr.PAD], [tr.SHIFT, tr.SHIFT, tr.REDUCE]], device=device
            )
            if mode == GIVEN
            else None
        )
        out = model(inputs, mask, given, policy=policy_for_mode(mode))
        assert out.transitions.tolist() == [[0, -1, -1], [0, 0, 1]]
        assert torch.isfinite(out.sentence).all()
    if not model.tracker:
        # A one-word sentence's vector is its projected word (h part).
        leaf = model.projection(inputs, mask)[0]  # sentence 0's only word
        torch.testing.assert_close(out.sentence[0], model.compose.hidden(leaf))


def test_empty_sentence_gives_zeros_and_no_steps():
    model = Spinn(4, 3, tracking_dim=2, predict_transitions=True)
    mask = torch.tensor([[False, False], [True, False]])
    out = model(torch.randn(2, 2, 4), mask, policy=Greedy())
    assert torch.equal(out.sentence[0], torch.zeros(3))
    assert out.transitions.tolist() == [[-1], [0]]


@pytest.mark.parametrize(
    "bad,reason",
    [
        ([[0, 1, 1]], "REDUCE with fewer than two"),
        ([[0, 0, 0]], "number of SHIFTs"),
        ([[0, -1, 0, 1]], "PAD before the end"),
        ([[0, 0, 2]], "unknown transition value"),
    ],
)
@pytest.mark.parametrize("variant", ["pi_nt", "pi_nt_sequential", "pi"])
def test_invalid_given_transitions_raise_clearly(bad, reason, variant):
    model = Spinn(4, 3, **VARIANTS[variant])
    n = 2
    with pytest.raises(ValueError, match=reason):
        model(torch.randn(1, n, 4), torch.ones(1, n, dtype=torch.bool), torch.tensor(bad))


def test_left_padded_forest_uses_top_tree():
    """The paper's fixed-length mode leaves padding items under the sentence's tree."""
    torch.manual_seed(0)
    model = Spinn(4, 3).double().eval()
    tokens, transitions = tr.parse_to_transitions("( ( a b ) c )")
    padded_tokens, padded = tr.crop_pad_left(tokens, transitions, 5, "<pad>")
    words = torch.randn(1, 3, 4, dtype=torch.float64)
    inputs = torch.cat([torch.randn(1, 2, 4, dtype=torch.float64), words], dim=1)
    mask = torch.ones(1, 5, dtype=torch.bool)
    with pytest.raises(ValueError, match="fewer REDUCEs than one tree over the words needs"):
        model(inputs, mask, torch.tensor([padded]))
    forest = model(inputs, mask, torch.tensor([padded]), policy=Given(left_padded=True))
    tree = model(words, torch.ones(1, 3, dtype=torch.bool), torch.tensor([transitions]))
    torch.testing.assert_close(forest.sentence, tree.sentence, atol=1e-12, rtol=0)


# --- memory: what autograd keeps grows linearly in T ----------------------------------------


def saved_bytes_for_training_step(num_words):
    """Bytes autograd saves for backward (saved-tensor hooks) plus the thin-stack tape."""
    torch.manual_seed(0)
    rng = random.Random(5)
    model = Spinn(16, 16, tracking_dim=8, predict_transitions=True)
    inputs, mask, transitions = make_batch([num_words] * 4, 16, rng, "cpu")

    def step():
        out = model(inputs, mask, transitions, policy=Given())
        return out.sentence.sum() + out.transition_logits.sum()

    return saved_for_backward_bytes(step)


def test_saved_memory_is_linear_in_sentence_length():
    short = saved_bytes_for_training_step(25)
    long = saved_bytes_for_training_step(100)
    ratio = long / short
    # T grows 4x (49 -> 199 steps): linear memory gives ~4x, a stack copy per step ~16x.
    assert 3.0 < ratio < 5.0, ratio


def test_tape_gradient_survives_retained_second_backward():
    torch.manual_seed(0)
    model = Spinn(4, 3, tracking_dim=2)
    rng = random.Random(6)
    inputs, mask, transitions = make_batch([6, 3], 4, rng, "cpu")
    inputs.requires_grad_()
    out = model(inputs, mask, transitions)
    out.sentence.sum().backward(retain_graph=True)
    first = inputs.grad.clone()
    inputs.grad = None
    out.sentence.sum().backward()
    torch.testing.assert_close(inputs.grad, first)


def test_nothing_outlives_a_training_step():
    """The tape, its table and the autograd graph are freed by reference counting alone once
    the step's outputs are gone (a reference cycle here once leaked every batch's graph)."""
    model = Spinn(4, 3, tracking_dim=2, predict_transitions=True)
    rng = random.Random(7)
    inputs, mask, transitions = make_batch([6, 3, 9], 4, rng, "cpu")
    gc.disable()
    try:
        refs = []
        for mode in (GIVEN, PREDICTED):
            with recording_tapes() as tapes:
                out = model(
                    inputs,
                    mask,
                    transitions if mode == GIVEN else None,
                    policy=policy_for_mode(mode),
                    return_nodes=True,
                )
            (out.sentence.sum() + out.node_hidden.sum()).backward()
            refs += [weakref.ref(t) for t in tapes] + [weakref.ref(t._table) for t in tapes]
            del out, tapes
        assert refs and all(ref() is None for ref in refs)
    finally:
        gc.enable()


@pytest.mark.parametrize("levelwise", [False, True])
def test_mask_with_a_hole_is_refused(levelwise):
    model = Spinn(4, 3, levelwise=levelwise)
    mask = torch.tensor([[True, False, True]])
    with pytest.raises(ValueError, match="padding before a word"):
        model(torch.randn(1, 3, 4), mask, torch.tensor([[0, 0, 1]]))
