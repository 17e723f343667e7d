"""The level-wise Child-Sum Tree-LSTM against a node-by-node reference (float64, outputs and
gradients), against torch's LSTM on chains, and its checks of the trees it is given."""

import random

import pytest
import torch

from spinn_core.child_sum import (
    ROOT,
    ChildSumTreeLSTM,
    chain_heads,
    check_heads,
    plan_dependency_levels,
)
from spinn_core.testing import pad_batch, random_heads, recursive_child_sum


def random_batch(lengths, input_dim, rng, device, dtype=torch.float64):
    generator = torch.Generator().manual_seed(rng.randrange(2**31))
    width = max(1, max(lengths))
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    inputs = torch.randn(len(lengths), width, input_dim, generator=generator, dtype=dtype)
    inputs = inputs * mask.unsqueeze(-1)
    trees = [random_heads(n, rng) for n in lengths]
    heads = pad_batch(trees, ROOT, width=width)
    return inputs.to(device), mask.to(device), heads.to(device), trees


def gradients(model, loss):
    model.zero_grad()
    loss.backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}


def test_equals_node_by_node_reference_outputs_and_gradients(device):
    """Paper eq. 2-8 written out per node, recursively, one sentence at a time, against the
    batched level-wise pass over a padded batch of 19 random trees of 1-30 words (any branching,
    non-projective ones included): same h at the root and at every node, same gradients of every
    parameter and of the inputs, in float64."""
    torch.manual_seed(0)
    rng = random.Random(0)
    model = ChildSumTreeLSTM(7, 5).double().to(device)
    for parameter in model.parameters():  # away from 0 so every term matters
        torch.nn.init.normal_(parameter, std=0.5)
    lengths = [rng.randint(1, 30) for _ in range(16)] + [1, 2, 30]
    inputs, mask, heads, trees = random_batch(lengths, 7, rng, device)
    weights = torch.randn(len(lengths), inputs.size(1), 5, dtype=torch.float64).to(device)

    x = inputs.clone().requires_grad_()
    out = model(x, mask, heads, return_nodes=True)
    loss = out.sentence.sum() + (out.node_hidden * weights).sum()
    batched_grads = gradients(model, loss)
    batched_x_grad = x.grad.clone()

    x_ref = inputs.clone().requires_grad_()
    roots, nodes = [], []
    for b, tree in enumerate(trees):
        root, hidden = recursive_child_sum(model, x_ref[b, : len(tree)], tree)
        roots.append(root)
        nodes.append(hidden)
    reference_loss = sum(
        root.sum() + (hidden * weights[b, : hidden.size(0)]).sum()
        for b, (root, hidden) in enumerate(zip(roots, nodes))
    )
    reference_grads = gradients(model, reference_loss)

    torch.testing.assert_close(out.sentence, torch.stack(roots), atol=1e-10, rtol=0)
    for b, hidden in enumerate(nodes):
        n = hidden.size(0)
        torch.testing.assert_close(out.node_hidden[b, :n], hidden, atol=1e-10, rtol=0)
        assert not out.node_hidden[b, n:].any()  # padding stays zero
    for name, grad in reference_grads.items():
        assert grad.abs().max() > 0, name
        torch.testing.assert_close(batched_grads[name], grad, atol=1e-10, rtol=0)
    torch.testing.assert_close(batched_x_grad, x_ref.grad, atol=1e-10, rtol=0)


def test_a_chain_is_torchs_lstm(device):
    """On a chain (each word the child of the next) every node has one child and the unit is a
    standard LSTM (Tai §3.2): equal to nn.LSTM with the same weights, in float64."""
    torch.manual_seed(1)
    model = ChildSumTreeLSTM(6, 4).double().to(device)
    lstm = torch.nn.LSTM(6, 4, batch_first=True).double().to(device)
    W_i, W_o, W_u, W_f = model.input_linear.weight.split(4)
    b_i, b_o, b_u, b_f = model.input_linear.bias.split(4)
    U_i, U_o, U_u = model.child_iou.weight.split(4)
    with torch.no_grad():  # torch's gate order: i, f, g, o
        lstm.weight_ih_l0.copy_(torch.cat([W_i, W_f, W_u, W_o]))
        lstm.weight_hh_l0.copy_(torch.cat([U_i, model.child_forget.weight, U_u, U_o]))
        lstm.bias_ih_l0.copy_(torch.cat([b_i, b_f, b_u, b_o]))
        lstm.bias_hh_l0.zero_()
    lengths = torch.tensor([9, 4, 1])
    inputs = torch.randn(3, 9, 6, dtype=torch.float64, device=device)
    mask = (torch.arange(9).unsqueeze(0) < lengths.unsqueeze(1)).to(device)
    out = model(inputs, mask, chain_heads(lengths, 9).to(device), return_nodes=True)
    default = model(inputs, mask, None)
    packed = torch.nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True)
    states, (h_n, _) = lstm(packed)
    states, _ = torch.nn.utils.rnn.pad_packed_sequence(states, batch_first=True)
    torch.testing.assert_close(out.sentence, h_n[0], atol=1e-12, rtol=0)
    torch.testing.assert_close(out.node_hidden, states, atol=1e-12, rtol=0)
    torch.testing.assert_close(default.sentence, out.sentence, atol=0, rtol=0)


def test_one_composition_per_level():
    """The loop runs height + 1 times: a 30-word star (every word under the first) is 2 levels,
    a 30-word chain 30."""
    mask = torch.ones(2, 30, dtype=torch.bool)
    star = [ROOT] + [0] * 29
    chain = chain_heads(torch.tensor([30]), 30)[0].tolist()
    plan = plan_dependency_levels(torch.tensor([star, star]), mask)
    assert [nodes.numel() for nodes, _, _ in plan.levels] == [58, 2]
    assert len(plan_dependency_levels(torch.tensor([chain, star]), mask).levels) == 30


def test_empty_sentences_and_heights():
    mask = torch.tensor([[True, True, True], [False, False, False]])
    heads = torch.tensor([[2, 2, ROOT], [ROOT, ROOT, ROOT]])
    assert check_heads(heads, mask).tolist() == [[0, 0, 1], [0, 0, 0]]
    model = ChildSumTreeLSTM(3, 2)
    out = model(torch.randn(2, 3, 3), mask, heads)
    assert not out.sentence[1].any()
    empty = model(torch.randn(0, 0, 3), torch.zeros(0, 0, dtype=torch.bool), None)
    assert empty.sentence.shape == (0, 2)


@pytest.mark.parametrize(
    "heads, reason",
    [
        ([1, ROOT, ROOT], "not exactly one root"),
        ([1, 2, 0], "not exactly one root"),  # no root at all (a cycle of 3)
        ([1, 0, ROOT], "cycle"),
        ([3, ROOT, 1], "head outside the sentence"),
        ([0, ROOT, 1], "head of a word is itself"),
    ],
)
def test_invalid_heads_raise_naming_the_sentence(heads, reason):
    mask = torch.ones(2, 3, dtype=torch.bool)
    batch = torch.tensor([[ROOT, 0, 0], heads])
    with pytest.raises(ValueError, match=f"sentence 1 .*{reason}"):
        ChildSumTreeLSTM(2, 2)(torch.randn(2, 3, 2), mask, batch)
