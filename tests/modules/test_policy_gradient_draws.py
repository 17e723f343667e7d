"""`PolicyGradient` with several trees drawn per example (`draws`, `baseline`), on a real core
SPINN in float64: the loss is the surrogate of
`spinn_core.policy_gradient_losses.draw_advantages` over exactly the trees a fresh sequence of
sampled passes draws, the reruns are the ones it needs, and the parser gets a gradient;
settings that cannot work are refused by name."""

import random

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from spinn_allennlp.modules.policy_gradient import PolicyGradient
from spinn_allennlp.testing import make_batch
from spinn_core.output import merge_rows
from spinn_core.policies import Greedy, Sampled
from spinn_core.policy_gradient_losses import advantages, draw_advantages
from spinn_core.spinn import Spinn


def setup(**spinn_options):
    torch.manual_seed(0)
    model = Spinn(5, 4, tracking_dim=3, predict_transitions=True, **spinn_options).double()
    inputs, mask, _ = make_batch([4, 6, 3, 7, 5], 5, random.Random(0), "cpu", torch.float64)
    target = torch.linspace(-1.0, 1.0, inputs.size(0), dtype=torch.float64)

    def task_losses(out):
        copies = out.sentence.size(0) // target.size(0)
        return (out.sentence.sum(dim=1) - target.repeat(copies)) ** 2

    calls = []

    def rerun(policy, copies=1):
        # The model's pass, `copies` times one after the other (the draws a fresh sequence of
        # sampled passes makes), its outputs as one batch of copies * B rows.
        outs = []
        for _ in range(copies):
            calls.append(type(policy).__name__)
            outs.append(model(inputs, mask, policy=policy))
        batch = inputs.size(0)
        rows = [torch.arange(c * batch, (c + 1) * batch) for c in range(copies)]
        out = merge_rows(outs, rows, copies * batch)
        return task_losses(out), [out]

    return model, inputs, mask, task_losses, rerun, calls


@pytest.mark.parametrize("baseline", ["greedy", "leave_one_out", "best_draw"])
def test_three_draws_give_the_surrogate_over_the_trees_drawn(baseline):
    model, inputs, mask, task_losses, rerun, calls = setup()
    gradient = PolicyGradient(draws=3, baseline=baseline, entropy_weight=0.01)
    torch.manual_seed(7)
    first = model(inputs, mask, policy=gradient.policy())
    loss = gradient.loss(task_losses(first), [first], rerun)
    assert calls == ["Sampled", "Sampled"] + (["Greedy"] if baseline == "greedy" else [])

    # The same three draws again, from the same seed, and the surrogate by hand.
    torch.manual_seed(7)
    outs = [model(inputs, mask, policy=Sampled()) for _ in range(3)]
    assert torch.equal(first.transitions, outs[0].transitions)
    rewards = torch.stack([-task_losses(out).detach() for out in outs])
    log_probs = torch.stack([out.action_log_probs.sum(dim=1) for out in outs])
    entropy = torch.stack([out.action_entropy.sum(dim=1) for out in outs])
    if baseline == "greedy":
        with torch.no_grad():
            greedy = -task_losses(model(inputs, mask, policy=Greedy()))
        advantage = advantages(rewards, greedy.expand_as(rewards))
    else:
        advantage = draw_advantages(rewards, baseline)
    expected = -(advantage * log_probs).mean() - 0.01 * entropy.mean()
    torch.testing.assert_close(loss, expected, atol=1e-12, rtol=0)
    # The draws differ (else the test proves little) and the parser gets a gradient.
    assert len({tuple(map(tuple, out.transitions.tolist())) for out in outs}) > 1
    loss.backward()
    classifier = model.tracker.transition_classifier
    assert classifier.weight.grad is not None and classifier.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("baseline", ["greedy", "best_draw"])
def test_a_rerun_that_takes_copies_draws_the_further_trees_in_one_pass(baseline):
    """With `rerun(policy, copies)` the draws after the training pass's come from one pass over
    the batch repeated (row c * B + b: example b's c-th copy); the surrogate is the same
    function of the trees drawn."""
    model, inputs, mask, task_losses, _, _ = setup()
    calls = []

    def rerun(policy, copies=1):
        calls.append((type(policy).__name__, copies))
        repeated = [inputs.repeat(copies, 1, 1), mask.repeat(copies, 1)]
        out = model(*repeated, policy=policy)
        return (task_losses(out) if copies == 1 else _losses(out, copies)), [out]

    def _losses(out, copies):
        return (out.sentence.sum(dim=1) - target.repeat(copies)) ** 2

    target = torch.linspace(-1.0, 1.0, inputs.size(0), dtype=torch.float64)
    gradient = PolicyGradient(draws=3, baseline=baseline, entropy_weight=0.01)
    torch.manual_seed(7)
    first = model(inputs, mask, policy=gradient.policy())
    loss = gradient.loss(task_losses(first), [first], rerun)
    assert calls == [("Sampled", 2)] + ([("Greedy", 1)] if baseline == "greedy" else [])

    torch.manual_seed(7)
    again = model(inputs, mask, policy=Sampled())
    further = model(inputs.repeat(2, 1, 1), mask.repeat(2, 1), policy=Sampled())
    batch = inputs.size(0)
    rewards = torch.cat([-task_losses(again).view(1, -1), -_losses(further, 2).view(2, batch)])
    log_probs = torch.cat(
        [again.action_log_probs.sum(dim=1).view(1, -1), further.action_log_probs.sum(1).view(2, -1)]
    )
    entropy = torch.cat(
        [again.action_entropy.sum(dim=1).view(1, -1), further.action_entropy.sum(1).view(2, -1)]
    )
    rewards = rewards.detach()
    if baseline == "greedy":
        with torch.no_grad():
            greedy = -task_losses(model(inputs, mask, policy=Greedy()))
        advantage = advantages(rewards, greedy.expand_as(rewards))
    else:
        advantage = draw_advantages(rewards, baseline)
    expected = -(advantage * log_probs).mean() - 0.01 * entropy.mean()
    torch.testing.assert_close(loss, expected, atol=1e-12, rtol=0)


def test_one_draw_is_reinforce_as_before():
    model, inputs, mask, task_losses, rerun, calls = setup()
    torch.manual_seed(3)
    one = PolicyGradient()
    out = model(inputs, mask, policy=one.policy())
    assert one.draws == 1 and one.baseline == "greedy"
    one.loss(task_losses(out), [out], rerun)
    assert calls == ["Greedy"]


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"draws": 0}, "draws must be at least 1"),
        ({"baseline": "mean"}, "baseline must be one of"),
        ({"baseline": "leave_one_out"}, "needs draws >= 2"),
        ({"baseline": "best_draw", "draws": 1}, "needs draws >= 2"),
        ({"draws": 4, "updates_per_batch": 3}, "do not go together"),
    ],
)
def test_settings_that_cannot_work_are_refused(settings, message):
    with pytest.raises(ConfigurationError, match=message):
        PolicyGradient.from_params(Params(dict(settings)))


@pytest.mark.parametrize("draws, baseline", [(1, "greedy"), (4, "best_draw")])
def test_a_frozen_parser_reading_untrained_nodes_costs_no_reruns(draws, baseline):
    """While nothing of the parser trains (its parameters frozen, its inputs without
    gradients) the term is zero and neither the greedy pass nor further draws run; unfrozen,
    they run again."""
    model, inputs, mask, task_losses, rerun, calls = setup(parser_trains_nodes=False)
    gradient = PolicyGradient(draws=draws, baseline=baseline)
    for parameter in model.parser_parameters():
        parameter.requires_grad_(False)
    out = model(inputs, mask, policy=gradient.policy())
    assert not inputs.requires_grad and not out.action_log_probs.requires_grad
    loss = gradient.loss(task_losses(out), [out], rerun)
    assert calls == [] and loss.item() == 0.0
    for parameter in model.parser_parameters():
        parameter.requires_grad_(True)
    out = model(inputs, mask, policy=gradient.policy())
    gradient.loss(task_losses(out), [out], rerun)
    assert calls == (["Greedy"] if draws == 1 else ["Sampled"] * 3)
