"""`parser_trains_nodes=False`: the tracker reads the nodes detached, so the parser's losses
(the transition loss, REINFORCE's log-probability term) train its own network only and never
the composition, the leaves or the inputs, while the values computed stay the same. Float64;
every check also runs with the option on, where the same loss must reach the nodes (so the
zero gradients below come from the option, not from a loss that never touched them)."""

import random

import pytest
import torch

from spinn_core.policies import Given, Sampled, SoftStrengths, StraightThroughGumbel
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch

LENGTHS = [1, 2, 5, 0, 17, 3, 30]


def model(parser_trains_nodes, summary_dim=0, composition_reads_tracker=True):
    torch.manual_seed(0)
    return Spinn(
        5,
        4,
        tracking_dim=3,
        predict_transitions=True,
        summary_dim=summary_dim,
        composition_reads_tracker=composition_reads_tracker,
        parser_trains_nodes=parser_trains_nodes,
    ).double()


def node_parameters(spinn):
    """What only the nodes' side computes with: the composition and the leaf projection."""
    return list(spinn.compose.parameters()) + list(spinn.projection.parameters())


def parser_loss(output):
    """A loss on what the parser computes alone: its logits (a transition loss's input) and,
    when sampling, the log-probability of the moves drawn (REINFORCE's score)."""
    loss = output.transition_logits.pow(2).sum()
    if output.action_log_probs is not None:
        loss = loss + output.action_log_probs.sum()
    return loss


def run(spinn, policy_name, seed=1):
    torch.manual_seed(seed)  # the same inputs and draws for both settings
    inputs, mask, transitions = make_batch(LENGTHS, 5, random.Random(seed), "cpu", torch.float64)
    inputs.requires_grad_(True)
    policy = {
        "given": None,
        "sampled": Sampled(),
        "soft": SoftStrengths(),
        "gumbel": StraightThroughGumbel(0.5),
    }[policy_name]
    if policy_name == "given":
        output = spinn(inputs, mask, transitions, policy=Given())
    else:
        output = spinn(inputs, mask, None, policy=policy)
    return inputs, output


def gradients(parameters):
    return [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in parameters]


CASES = [("given", 0), ("sampled", 0), ("sampled", 2), ("given", 2), ("soft", 0), ("gumbel", 0)]


@pytest.mark.parametrize("policy_name,summary_dim", CASES)
def test_the_values_do_not_change(policy_name, summary_dim):
    trained, detached = model(True, summary_dim), model(False, summary_dim)
    detached.load_state_dict(trained.state_dict())
    spinn_on = trained.train()
    spinn_off = detached.train()
    _, on = run(spinn_on, policy_name)
    _, off = run(spinn_off, policy_name)
    assert torch.equal(on.transitions, off.transitions)
    torch.testing.assert_close(off.sentence, on.sentence, atol=0, rtol=0)
    torch.testing.assert_close(off.transition_logits, on.transition_logits, atol=0, rtol=0)


@pytest.mark.parametrize("policy_name,summary_dim", CASES)
def test_the_parser_loss_trains_the_parser_only(policy_name, summary_dim):
    for parser_trains_nodes in (True, False):
        spinn = model(parser_trains_nodes, summary_dim).train()
        inputs, output = run(spinn, policy_name)
        parser_loss(output).backward()
        nodes = gradients(node_parameters(spinn)) + [inputs.grad]
        reached_nodes = any(bool(g.abs().sum() > 0) for g in nodes if g is not None)
        assert reached_nodes == parser_trains_nodes
        classifier = spinn.tracker.transition_classifier.weight.grad
        assert classifier is not None and bool(classifier.abs().sum() > 0)
        cell = spinn.tracker.cell.weight_ih.grad
        assert cell is not None and bool(cell.abs().sum() > 0)
        if summary_dim:
            summaries = gradients(list(spinn.summaries.parameters()))
            assert any(bool(g.abs().sum() > 0) for g in summaries)


def test_the_task_loss_is_untouched_for_a_parser_of_its_own():
    """With composition_reads_tracker=False the tracker feeds nothing the sentence vector is
    made of (on given trees), so the task's gradients are the same with and without the
    option: detaching removes the parser's route only."""
    results = []
    for parser_trains_nodes in (True, False):
        spinn = model(parser_trains_nodes, composition_reads_tracker=False).train()
        inputs, output = run(spinn, "given")
        output.sentence.pow(2).sum().backward()
        results.append(gradients(node_parameters(spinn)) + [inputs.grad])
    for on, off in zip(*results):
        assert bool(on.abs().sum() > 0)
        torch.testing.assert_close(off, on, atol=0, rtol=0)


def test_it_needs_a_tracker():
    with pytest.raises(ValueError, match="parser_trains_nodes=False.*tracking_dim"):
        Spinn(5, 4, parser_trains_nodes=False)
