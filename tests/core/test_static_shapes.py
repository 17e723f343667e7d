"""The GPU's code path qualifies for CUDA graphs, checked on the CPU.

Every runner and policy that a graph replays runs on the static-shape path (what
``graphs.BucketPass`` captures: the batch laid out, the loop, the output, and the backward pass
of all that, on a batch padded to its bucket) under a dispatch mode that flags any operation
that reads a value back to the host or has an output whose size depends on values
(``spinn_core.testing.static_shapes``); and two different batches of one bucket (other
lengths, other trees, other moves) must dispatch the same operations on the same shapes. The
CPU's sparse path fails both checks, and so does the loop before issue 46 (which took the
sparse path's host reads onto the GPU too): the check tells them apart.
"""

import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.graphs import GraphedPasses
from spinn_core.policies import (
    Given,
    Greedy,
    Mixed,
    Sampled,
    SoftStrengths,
    StraightThroughGumbel,
)
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
from spinn_core.testing.static_shapes import HostReads, first_difference

PARSER = dict(tracking_dim=4, predict_transitions=True)
# name -> (model options, policy, whether it reads given transitions, training mode)
CASES = {
    "pi_nt_given": (dict(levelwise=False), Given, True, True),
    "pi_given": (dict(tracking_dim=4), Given, True, True),
    "spinn_teacher_forced": (PARSER, Given, True, True),
    "spinn_greedy": (PARSER, Greedy, False, False),
    "spinn_mixed": (PARSER, lambda: Mixed(0.5), True, True),
    # REINFORCE's draws, and the best-draw parser's (several sampled passes).
    "spinn_sampled": (PARSER, Sampled, False, True),
    "summaries_sampled": (dict(PARSER, summary_dim=3), Sampled, False, True),
    "typed_reduce_given": (dict(PARSER, num_reduce_types=3), Given, True, True),
    "typed_reduce_greedy": (dict(PARSER, num_reduce_types=3), Greedy, False, True),
    "node_inputs_given": (dict(node_input_dim=3, levelwise=False), Given, True, True),
    "treernn_greedy": (dict(PARSER, composition="treernn"), Greedy, False, True),
    "batch_norm_dropout": (
        dict(PARSER, projection_batch_norm=True, projection_dropout=0.2),
        Greedy,
        False,
        True,
    ),
    "soft_stack": (PARSER, SoftStrengths, False, True),
    "straight_through_gumbel": (PARSER, lambda: StraightThroughGumbel(0.5), False, True),
}
# Two batches of one bucket: 7 sentences (padded to 8), the longest 12 words (a bucket edge).
LENGTHS = ([7, 1, 12, 0, 2, 11, 5], [3, 12, 9, 4, 0, 1, 8])


def model_for(options, static_shapes):
    torch.manual_seed(0)
    model = Spinn(5, 4, **options)
    with torch.no_grad():  # decisive parsers, whose moves differ from batch to batch
        for parameter in model.parameters():
            parameter.mul_(3.0)
    model.static_shapes = static_shapes
    return model


def batch_of(lengths, seed, options):
    inputs, mask, transitions = make_batch(lengths, 5, random.Random(seed))
    generator = torch.Generator().manual_seed(seed)
    reduce_types = node_inputs = None
    if options.get("num_reduce_types"):
        types = torch.randint(0, 3, transitions.shape, generator=generator)
        reduce_types = torch.where(transitions == tr.REDUCE, types, -1)
    if options.get("node_input_dim"):
        node_inputs = torch.randn(len(lengths), transitions.size(1), 3, generator=generator)
    return inputs, mask, transitions, reduce_types, node_inputs


def loss_of(outputs):
    """A scalar from every floating output, so that the backward pass runs through all."""
    values = [value for value in outputs.values() if value is not None]
    return sum(value.sum() for value in values if value.is_floating_point())


def bucketed_pass(name, lengths, seed):
    """Records the static-shape pass of case ``name`` on a batch of ``lengths``: the batch
    checked and padded first (host reads allowed there), then the pass and its backward under
    the dispatch mode."""
    options, policy, reads_given, training = CASES[name]
    model = model_for(options, static_shapes=True).train(training)
    inputs, mask, transitions, reduce_types, node_inputs = batch_of(lengths, seed, options)
    passes = GraphedPasses(model, batch_size=8, capture=False)
    policy = policy()
    bucketed = passes.bucket(
        inputs,
        mask,
        transitions if reads_given else None,
        policy,
        reduce_types,
        node_inputs,
        return_nodes=not policy.soft,
    )
    assert bucketed is not None, passes.eager
    torch.manual_seed(seed)
    with HostReads() as check:
        loss_of(bucketed.module(*bucketed.args)).backward()
    return check


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gpu_path_reads_nothing_back_and_keeps_its_shapes(name):
    first, second = (bucketed_pass(name, lengths, seed) for seed, lengths in enumerate(LENGTHS))
    assert first.violations == [] and second.violations == []
    assert first.ops, "nothing was recorded"
    assert first_difference(first.ops, second.ops) is None


def sparse_pass(name, lengths, seed):
    options, policy, reads_given, training = CASES[name]
    model = model_for(options, static_shapes=False).train(training)
    inputs, mask, transitions, reduce_types, node_inputs = batch_of(lengths, seed, options)
    torch.manual_seed(seed)
    with HostReads() as check:
        out = model(
            inputs,
            mask,
            transitions if reads_given else None,
            policy=policy(),
            reduce_types=reduce_types,
            node_inputs=node_inputs,
        )
        logits = out.transition_logits
        (out.sentence.sum() + (0 if logits is None else logits.sum())).backward()
    return check


@pytest.mark.parametrize("name", ["pi_nt_given", "spinn_greedy", "spinn_sampled"])
def test_the_check_fails_the_cpus_sparse_path(name):
    """The CPU's path reads the number of running sentences and the reducing rows back to the
    host (once before the loop for given trees, every step otherwise), and its shapes follow
    the data: the check sees both, inside the loop."""
    first, second = (sparse_pass(name, lengths, seed) for seed, lengths in enumerate(LENGTHS))
    assert any("runners/thin_stack.py" in violation for violation in first.violations)
    assert first_difference(first.ops, second.ops) is not None


def test_the_check_flags_each_kind_of_host_read():
    x = torch.arange(6.0)
    mask = x > 2
    offenders = {
        "nonzero": lambda: x.nonzero(),
        "masked_select": lambda: x.masked_select(mask),
        "boolean indexing": lambda: x[mask],
        "boolean assignment": lambda: x.clone().index_put_((mask,), torch.zeros(())),
        "item": lambda: x[0].item(),
        "bool": lambda: bool(mask.any()),
        "int": lambda: int(x.sum()),
        "tolist": lambda: x.tolist(),
        "numpy": lambda: x.numpy(),
        "unique": lambda: torch.unique(x),
        "bincount": lambda: torch.bincount(x.long()),
        "tensor from a list": lambda: torch.tensor([1, 2, 3]),
    }
    for what, offend in offenders.items():
        with HostReads() as check:
            offend()
        assert check.violations, what
    fine = {
        "arithmetic": lambda: (x * 2).sigmoid(),
        "long indices": lambda: x[torch.arange(3)],
        "where with a scalar": lambda: torch.where(mask, x, 0),
        "assignment of a scalar": lambda: x.clone().__setitem__(0, 1.0),
    }
    for what, run in fine.items():
        with HostReads() as check:
            run()
        assert not check.violations, (what, check.violations)
    assert not hasattr(torch.Tensor.__dict__.get("tolist"), "__wrapped__")
    assert torch.arange(3).tolist() == [0, 1, 2]  # the patch is gone


def test_the_check_sees_shapes_that_follow_the_data():
    def region(n):
        with HostReads() as check:
            torch.zeros(n).sigmoid()
        return check.ops

    assert first_difference(region(3), region(3)) is None
    assert first_difference(region(3), region(4)) is not None
