"""The gated recursive cell (``composition="grc"``): its equation written out, a gate that
passes one child through, its gradients, and SPINN-PI-NT with it on random trees."""

import random

import torch

from spinn_core.compositions import GRCComposition, composition_choice
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch

D, E = 4, 3


def test_the_parent_is_the_layer_normalised_gated_sum():
    torch.manual_seed(0)
    cell = GRCComposition(D, extra_dim=E).double()
    left, right = torch.randn(2, 5, D, dtype=torch.float64)
    extra = torch.randn(5, E, dtype=torch.float64)
    hidden = torch.nn.functional.gelu(
        torch.cat([left, right, extra], dim=-1) @ cell.hidden_layer.weight.T
        + cell.hidden_layer.bias
    )
    out = hidden @ cell.output_layer.weight.T + cell.output_layer.bias
    g_left, g_right, g_content, content = out.split(D, dim=-1)
    mixed = (
        torch.sigmoid(g_left) * left
        + torch.sigmoid(g_right) * right
        + torch.sigmoid(g_content) * content
    )
    centred = mixed - mixed.mean(-1, keepdim=True)
    expected = centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + cell.norm.eps)
    expected = expected * cell.norm.weight + cell.norm.bias
    torch.testing.assert_close(cell(left, right, extra), expected, atol=1e-12, rtol=0)
    assert cell.node_dim == D and cell.hidden(expected) is expected
    assert composition_choice("grc") == (GRCComposition, {})


def test_a_gate_can_pass_one_child_through():
    # The left gate open, the others shut: the parent is the left child, normalised — what a
    # TreeLSTM's o * tanh(c) cannot give for a child outside (-1, 1).
    cell = GRCComposition(D).double()
    with torch.no_grad():
        cell.output_layer.weight.zero_()
        cell.output_layer.bias.copy_(torch.tensor([50.0] * D + [-50.0] * (3 * D)))
    left = torch.tensor([[3.0, -2.0, 0.5, 7.0]], dtype=torch.float64)
    right = torch.randn(1, D, dtype=torch.float64)
    torch.testing.assert_close(cell(left, right), cell.norm(left), atol=1e-12, rtol=0)


def test_gradients_equal_finite_differences():
    torch.manual_seed(1)
    cell = GRCComposition(D, extra_dim=E).double()
    left, right = torch.randn(2, 3, D, dtype=torch.float64, requires_grad=True)
    extra = torch.randn(3, E, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(cell, (left, right, extra))
    leaf_extra = torch.randn(3, E, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(cell.leaf, (leaf_extra,))


def test_spinn_pi_nt_composes_with_it_level_by_level_as_node_by_node():
    # The level-wise runner (PI-NT) against the thin stack, given trees, float64.
    torch.manual_seed(0)
    rng = random.Random(0)
    inputs, mask, transitions = make_batch([1, 5, 23, 9], 7, rng, "cpu", torch.float64)
    outputs = []
    for levelwise in (False, True):
        torch.manual_seed(0)
        model = Spinn(7, 6, levelwise=levelwise, composition="grc").double()
        outputs.append(model(inputs, mask, transitions).sentence)
    torch.testing.assert_close(outputs[0], outputs[1], atol=1e-12, rtol=0)
    assert outputs[0].shape == (4, 6)
