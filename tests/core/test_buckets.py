"""Length buckets: a batch padded to its bucket (empty sentences to the bucket's batch size, the
longest sentence to a length edge, PAD steps) and run on the static-shape path gives the
outputs and gradients of the batch as it is on the CPU's sparse path, in float64 (where the
two differ only by rounding, ~1e-15: 1e-10 claims equality); and the CUDA-graph option leaves
CPU passes as they were (the CUDA side: ``test_cuda_graphs.py``)."""

import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.buckets import batch_bucket, bucket_size, pad_dims
from spinn_core.cells import masked_batch_norm
from spinn_core.graphs import GraphedPasses, GraphedSpinn
from spinn_core.policies import (
    BeamSearch,
    Choice,
    Given,
    Greedy,
    Mixed,
    Replayed,
    Sampled,
    SoftStrengths,
    StraightThroughGumbel,
    TransitionPolicy,
    with_move_check,
)
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch

EXACT = dict(atol=1e-10, rtol=0.0)
PARSER = dict(tracking_dim=4, predict_transitions=True)
# 5 sentences of up to 10 words: a bucket of 8 sentences and 12 words (23 steps, not 19).
LENGTHS = [7, 1, 10, 0, 4]
# name -> (model options, policy, whether the pass reads given transitions)
DETERMINISTIC = {
    "pi_nt_given": (dict(levelwise=False), Given, True),
    "pi_given": (dict(tracking_dim=4), Given, True),
    "spinn_teacher_forced": (PARSER, Given, True),
    "spinn_greedy": (PARSER, Greedy, False),
    "summaries_greedy": (dict(PARSER, summary_dim=3), Greedy, False),
    "typed_reduce_given": (dict(PARSER, num_reduce_types=3), Given, True),
    "typed_reduce_greedy": (dict(PARSER, num_reduce_types=3), Greedy, False),
    "node_inputs_given": (dict(node_input_dim=3, levelwise=False), Given, True),
    "leaf_cell_given": (dict(node_input_dim=5, leaf="cell", levelwise=False), Given, True),
    "treernn_greedy": (dict(PARSER, composition="treernn"), Greedy, False),
    "batch_norm_greedy": (dict(PARSER, projection_batch_norm=True), Greedy, False),
    "soft_stack": (PARSER, SoftStrengths, False),
}


def model_and_batch(options, seed=0):
    torch.manual_seed(seed)
    model = Spinn(5, 4, **options).double()
    with torch.no_grad():  # decisive parsers: choices far from ties
        for parameter in model.parameters():
            parameter.mul_(2.0)
    inputs, mask, transitions = make_batch(LENGTHS, 5, random.Random(seed), "cpu", torch.float64)
    generator = torch.Generator().manual_seed(seed)
    extras = {}
    if options.get("num_reduce_types"):
        types = torch.randint(0, 3, transitions.shape, generator=generator)
        extras["reduce_types"] = torch.where(transitions == tr.REDUCE, types, -1)
    if options.get("node_input_dim"):
        width = options["node_input_dim"]
        extras["node_inputs"] = torch.randn(
            len(LENGTHS), transitions.size(1), width, generator=generator, dtype=torch.float64
        )
    return model, inputs.requires_grad_(), mask, transitions, extras


def run_both(model, inputs, mask, transitions, extras, policy, padded_policy=None):
    """(sparse output, its gradients, padded static output, its gradients)."""
    results = []
    for padded in (False, True):
        model.zero_grad()
        inputs.grad = None
        if padded:
            passes = GraphedPasses(model, batch_size=8, capture=False)
            out = passes(inputs, mask, transitions, padded_policy or policy(), **extras)
            assert out is not None, passes.eager
        else:
            model.static_shapes = False
            out = model(inputs, mask, transitions, policy=policy(), **extras)
        loss = weighted_sum(out)
        loss.backward()
        grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
        grads["inputs"] = inputs.grad.clone()
        results += [out, grads]
    return results


def weighted_sum(out):
    """A loss that weighs every floating output and every position differently."""
    total = 0
    for name in ("sentence", "transition_logits", "node_states", "reduce_strengths"):
        value = getattr(out, name)
        if value is not None:
            weights = torch.linspace(-1.0, 2.0, value.numel(), dtype=value.dtype)
            total = total + (value * weights.view(value.shape)).sum()
    for name in ("action_log_probs", "action_entropy"):
        value = getattr(out, name)
        if value is not None:
            total = total + value.sum()
    return total


def assert_same(sparse, padded, sparse_grads, padded_grads):
    assert torch.equal(padded.transitions, sparse.transitions)
    assert padded.mode == sparse.mode
    for name in (
        "sentence",
        "transition_logits",
        "node_states",
        "node_hidden",
        "reduce_strengths",
        "reduce_type_logits",
        "action_log_probs",
        "action_entropy",
    ):
        expected, got = getattr(sparse, name), getattr(padded, name)
        assert (expected is None) == (got is None), name
        if expected is not None:
            torch.testing.assert_close(got, expected, **EXACT, msg=name)
    if sparse.reduce_types is not None:
        assert torch.equal(padded.reduce_types, sparse.reduce_types)
    assert padded_grads.keys() == sparse_grads.keys()
    for name, grad in sparse_grads.items():
        torch.testing.assert_close(padded_grads[name], grad, **EXACT, msg=name)


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_padding_to_a_bucket_changes_no_output_and_no_gradient(name):
    options, policy, reads_given = DETERMINISTIC[name]
    model, inputs, mask, transitions, extras = model_and_batch(options)
    given = transitions if reads_given else None
    sparse, sparse_grads, padded, padded_grads = run_both(
        model, inputs, mask, given, extras, policy
    )
    assert padded.sentence.shape == (len(LENGTHS), 4)
    assert padded.transitions.shape == sparse.transitions.shape
    assert_same(sparse, padded, sparse_grads, padded_grads)


def test_batch_norm_in_training_keeps_the_padding_out_of_its_statistics():
    model, inputs, mask, transitions, _ = model_and_batch(dict(PARSER, projection_batch_norm=True))
    model.train()
    norm = model.projection.batch_norm
    sparse, sparse_grads, padded, padded_grads = run_both(
        model, inputs, mask, transitions, {}, Given
    )
    assert_same(sparse, padded, sparse_grads, padded_grads)
    # Both passes updated the running statistics by the same batch's, once each.
    assert int(norm.num_batches_tracked) == 2
    fresh = Spinn(5, 4, **PARSER, projection_batch_norm=True).double()
    fresh.load_state_dict(model.state_dict())
    fresh.projection.batch_norm.reset_running_stats()
    fresh.train()
    fresh.static_shapes = False
    for _ in range(2):
        fresh(inputs, mask, transitions)
    for statistic in ("running_mean", "running_var"):
        torch.testing.assert_close(
            getattr(norm, statistic), getattr(fresh.projection.batch_norm, statistic), **EXACT
        )


def test_masked_batch_norm_keeps_bf16_rows_statistics_in_float32():
    """Under mixed precision the static path's batch norm gets bf16 rows: its statistics must
    be taken in float32 (as nn.BatchNorm1d's), else `rows - mean` in bf16 (8 significant bits)
    loses a spread of 0.5 around a mean of 8 (bf16's spacing there is 0.0625)."""
    torch.manual_seed(0)
    rows = (8.0 + 0.5 * torch.randn(64, 6)).to(torch.bfloat16)
    real = torch.arange(64) < 50
    norm = torch.nn.BatchNorm1d(6)
    reference_norm = torch.nn.BatchNorm1d(6)
    out = masked_batch_norm(norm, rows, real)
    # The float32 reference on the same (bf16-rounded) real rows.
    reference = reference_norm(rows[real].float())
    assert out.dtype == torch.bfloat16
    # What is left is bf16's rounding of the normalised output (|values| < 4: spacing <= 2^-6).
    torch.testing.assert_close(out[real].float(), reference, atol=2.0**-6, rtol=0.0)
    # Float32 sums of 50 rows taken in another order than BatchNorm1d's kernel: each a few
    # float32 roundings (~6e-8 relative) apart, whatever kernels a CPU picks.
    torch.testing.assert_close(norm.running_mean, reference_norm.running_mean, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(norm.running_var, reference_norm.running_var, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sampler", ["sampled", "mixed", "straight_through"])
def test_random_policies_padded_follow_trees_the_sparse_path_scores_the_same(sampler):
    """Draws differ with the random numbers each path consumes; the trees a padded pass drew,
    followed on the sparse path, give its outputs and gradients."""
    model, inputs, mask, transitions, _ = model_and_batch(PARSER)
    torch.manual_seed(1)
    policy = {
        "sampled": Sampled(),
        "mixed": Mixed(0.5),
        "straight_through": StraightThroughGumbel(0.5),
    }[sampler]
    passes = GraphedPasses(model, batch_size=8, capture=False)
    padded = passes(inputs, mask, transitions if sampler == "mixed" else None, policy)
    assert padded is not None
    drawn = padded.transitions
    for row, n in zip(drawn.tolist(), LENGTHS):
        steps = [move for move in row if move != tr.PAD]
        assert tr.is_valid(steps, n) if n else steps == []
    model.static_shapes = False
    if sampler == "sampled":
        replayed = model(inputs, mask, policy=Replayed(list(drawn.t())))
        for name in ("sentence", "transition_logits", "action_log_probs", "action_entropy"):
            torch.testing.assert_close(
                getattr(padded, name), getattr(replayed, name), **EXACT, msg=name
            )
    else:
        followed = model(inputs, mask, drawn, policy=Given())
        torch.testing.assert_close(padded.sentence, followed.sentence, **EXACT)


def test_buckets_and_padding():
    assert bucket_size(9, (8, 12, 16)) == 12
    assert bucket_size(12, (8, 12, 16)) == 12
    assert bucket_size(17, (8, 12, 16)) is None
    padded = pad_dims(torch.ones(2, 3, dtype=torch.long), (4, 5), tr.PAD)
    assert padded.shape == (4, 5)
    assert padded[:2, :3].eq(1).all() and padded[2:].eq(tr.PAD).all()
    assert pad_dims(torch.ones(2, 7), (2, 5), 0).shape == (2, 5)  # cut to the bucket's steps
    # Without a configured batch size: the next power of two, at least 8.
    assert [batch_bucket(n) for n in (1, 8, 9, 64, 65)] == [8, 8, 16, 64, 128]


class Foreign(TransitionPolicy):
    """A policy written elsewhere: its moves are checked, a host read every step."""

    mode = "foreign"

    def choose(self, step):
        return Choice(step.legal(step.logits.argmax(dim=-1)))


def test_what_a_graph_cannot_replay_runs_eagerly():
    model, inputs, mask, transitions, _ = model_and_batch(PARSER)
    passes = GraphedPasses(model, batch_size=8, capture=False)
    for policy in (with_move_check(Foreign()), BeamSearch(2), Sampled(record=True)):
        assert passes(inputs, mask, None, policy) is None
    assert passes.eager == {"policy not replayable (state between calls, or values read back)": 3}
    # PI-NT on given trees, level-wise when eager, is replayed through the step loop
    # (tests/modules/test_graph_settings.py: the same values).
    levelwise, inputs, mask, transitions, _ = model_and_batch({})
    assert levelwise.levelwise
    assert (
        GraphedPasses(levelwise, batch_size=8, capture=False)(inputs, mask, transitions, Given())
        is not None
    )


def test_a_batch_past_the_largest_bucket_runs_eagerly():
    model, inputs, mask, transitions, _ = model_and_batch(dict(levelwise=False))
    passes = GraphedPasses(model, batch_size=4, capture=False)  # 5 sentences: too many
    assert passes(inputs, mask, transitions, Given()) is None
    assert passes.eager == {"larger than the largest bucket": 1}


@pytest.mark.parametrize("options", [dict(levelwise=False), PARSER], ids=["pi_nt", "spinn"])
def test_the_cuda_graph_option_leaves_cpu_passes_as_they_were(options):
    """On the CPU the option changes nothing: the same (sparse) pass, to the last bit."""
    model, inputs, mask, transitions, _ = model_and_batch(options)
    plain = model(inputs, mask, transitions)
    wrapped = GraphedSpinn(model, batch_size=8)
    graphed = wrapped(inputs, mask, transitions)
    assert wrapped.graphs is None  # nothing was captured
    assert torch.equal(graphed.sentence, plain.sentence)
    assert torch.equal(graphed.transitions, plain.transitions)
