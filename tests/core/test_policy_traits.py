"""A policy declares what it needs and gives once (`spinn_core.policies.PolicyTraits`), and what
branches on a policy derives from that declaration: the flags read off it, the runner picked,
the CUDA graphs' refusal, the move check, the demo's captions. A policy written before traits,
with flags as class attributes, still works; one written elsewhere that declares itself
replayable has its moves checked on the device, with no host read per step."""

import random

import pytest
import torch

from spinn_core import transitions as tr
from spinn_core.graphs import GraphedPasses
from spinn_core.output import Mode
from spinn_core.policies import (
    FLAGS,
    BeamMixture,
    BeamSearch,
    Choice,
    Given,
    Greedy,
    Mixed,
    MoveChecked,
    MoveCheckedOnDevice,
    PolicyTraits,
    Replayed,
    Sampled,
    TransitionPolicy,
    with_move_check,
)
from spinn_core.policy_registry import POLICIES, registered_policies
from spinn_core.runners.beam import run_beam, run_beam_mixture
from spinn_core.runners.levelwise import run_levelwise
from spinn_core.runners.soft_stack import run_soft_stack
from spinn_core.runners.thin_stack import run_thin_stack
from spinn_core.spinn import Spinn, pick_runner
from spinn_core.testing import make_batch

PARSER = dict(tracking_dim=4, predict_transitions=True)
LENGTHS = [5, 1, 3, 7]
ARGUMENTS = {
    "beam_search": {"width": 2},
    "beam_mixture": {"width": 2},
    "mixed": {"self_transition_prob": 0.5},
}


def package_policies():
    """This package's policy classes: the registered ones (not the tests') and Replayed."""
    classes = {
        name: cls
        for name, cls in POLICIES.classes.items()
        if cls.__module__.startswith("spinn_core.")
    }
    assert set(classes) <= set(registered_policies())
    return {**classes, "replayed": Replayed}


def instance(name, cls):
    return cls([]) if cls is Replayed else cls(**ARGUMENTS.get(name, {}))


def test_every_policy_of_the_package_declares_its_traits_once():
    modes = set()
    for cls in package_policies().values():
        own = vars(cls)
        assert isinstance(own.get("traits"), PolicyTraits), cls
        assert not [flag for flag in FLAGS if flag in own], cls  # no flag beside the traits
        assert cls.traits.caption and cls.traits.mode in set(Mode)
        modes.add(cls.traits.mode)
    assert modes == set(Mode)  # every mode is some policy's, declared with it


@pytest.mark.parametrize("name", sorted(package_policies()))
def test_the_flags_read_off_a_policy_are_views_of_its_traits(name):
    policy = instance(name, package_policies()[name])
    traits = policy.traits
    assert policy.mode == traits.mode and policy.needs_parser == traits.needs_parser
    assert policy.soft == (traits.drives == "soft")
    assert policy.searches == (traits.drives in ("beam", "beam_mixture"))
    assert policy.mixes == (traits.drives == "beam_mixture")
    assert policy.follows_given == (traits.given == "follows")
    assert policy.needs_given == (traits.given == "mixes")
    for flag in ("learns_from_task", "replayable", "rescores_only", "left_padded"):
        assert getattr(policy, flag) == getattr(traits, flag)
    with pytest.raises(AttributeError):
        policy.needs_parser = False  # read-only: the traits are the one place


def test_constructor_arguments_change_an_instances_traits():
    assert Given(left_padded=True).left_padded and not Given().left_padded
    assert not Given.traits.left_padded
    assert Sampled().replayable and not Sampled(record=True).replayable


def test_the_runner_picked_follows_the_declaration():
    expected = {
        "soft": run_soft_stack,
        "beam": run_beam,
        "beam_mixture": run_beam_mixture,
        "discrete": run_thin_stack,
    }
    inputs = torch.zeros(2, 3, 5)
    tracked, untracked = Spinn(5, 4, **PARSER).parts(), Spinn(5, 4).parts()
    for name, cls in package_policies().items():
        policy = instance(name, cls)
        drives = policy.traits.drives
        assert pick_runner(policy, tracked, True, inputs) is expected[drives], name
        levelwise = drives == "discrete" and policy.traits.given == "follows"
        runner = pick_runner(policy, untracked, True, inputs)
        assert runner is (run_levelwise if levelwise else expected[drives]), name


def test_the_graphs_refuse_what_is_not_declared_replayable():
    torch.manual_seed(0)
    model = Spinn(5, 4, **PARSER)
    inputs, mask, transitions = make_batch(LENGTHS, 5, random.Random(0))
    for name, cls in package_policies().items():
        passes = GraphedPasses(model, batch_size=8, capture=False)
        policy = instance(name, cls)
        given = transitions if policy.traits.reads_given else None
        bucketed = passes.bucket(inputs, mask, given, policy)
        assert (bucketed is not None) == policy.traits.replayable, name
        refused = (
            {}
            if policy.traits.replayable
            else {"policy not replayable (state between calls, or values read back)": 1}
        )
        assert passes.eager == refused, name


class OldStyle(TransitionPolicy):
    """Written before traits: flags as class attributes."""

    mode = "old_style"
    needs_parser = False

    def choose(self, step):
        must_shift, _ = step.forced()
        return Choice(torch.where(must_shift, tr.SHIFT, tr.REDUCE))


class OldStyleSoft(TransitionPolicy):
    mode = "old_soft"
    soft = True
    learns_from_task = True

    def reduce_strength(self, step):
        return torch.sigmoid(step.logits[:, 1] - step.logits[:, 0])


class OwnGreedy(Greedy):
    """A subclass of one of ours with a `choose` of its own."""

    def choose(self, step):
        return super().choose(step)


def test_a_policy_written_before_traits_still_works():
    assert OldStyle.traits == PolicyTraits(mode="old_style", needs_parser=False)
    assert "needs_parser" not in vars(OldStyle)  # folded in: the view reads the traits
    policy = OldStyle()
    assert policy.mode == "old_style" and not policy.needs_parser and not policy.replayable
    checked = with_move_check(policy)
    assert isinstance(checked, MoveChecked) and checked.mode == "old_style"
    inputs, mask, _ = make_batch(LENGTHS, 5, random.Random(0))
    output = Spinn(5, 4)(inputs, mask, policy=policy)
    assert output.mode == "old_style"
    for row, length in zip(output.transitions.tolist(), LENGTHS):
        assert [t for t in row if t != tr.PAD] == tr.left_branching_transitions(length)
    soft = OldStyleSoft()
    assert soft.traits.drives == "soft" and soft.learns_from_task
    assert with_move_check(soft) is soft
    assert Spinn(5, 4, **PARSER)(inputs, mask, policy=soft).mode == "old_soft"
    # What Greedy vouches for its moves is not said of a `choose` that replaces its own.
    assert OwnGreedy.traits.mode == Mode.PREDICTED and not OwnGreedy.traits.legal_by_construction
    assert isinstance(with_move_check(OwnGreedy()), MoveChecked)
    for policy in (Given(), Greedy(), Sampled(), Mixed(0.5), BeamSearch(2), BeamMixture(2)):
        assert with_move_check(policy) is policy
    with pytest.raises(TypeError, match="put the flags in its PolicyTraits"):

        class Both(TransitionPolicy):  # noqa: F841
            traits = PolicyTraits(mode="both")
            needs_parser = False


class ReplayableForeign(TransitionPolicy):
    """Written elsewhere, declared replayable: `moves` at every step, through `step.legal`
    unless `raw`."""

    traits = PolicyTraits(mode="foreign", needs_parser=False, replayable=True)

    def __init__(self, move=tr.REDUCE, raw=False):
        self.move, self.raw = move, raw

    def choose(self, step):
        must_shift, _ = step.forced()
        action = torch.full_like(must_shift, self.move, dtype=torch.long)
        return Choice(action if self.raw else step.legal(action))

    def __repr__(self):
        return f"ReplayableForeign({self.move}, raw={self.raw})"


HOST_READS = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__", "cpu", "numpy")


@pytest.fixture
def host_reads(monkeypatch):
    """Counts the host reads (``.item()``, ``bool()``, ``.tolist()``, ...) made inside the
    device check's ``choose`` and, apart, in its one read after the pass."""
    counts = {"choose": 0, "after": 0}
    where = []

    for method in HOST_READS:
        original = getattr(torch.Tensor, method)

        def counted(self, *args, _original=original, **kwargs):
            if where:
                counts[where[-1]] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, method, counted)

    def spying(name, method):
        def spy(self, *args, **kwargs):
            where.append(name)
            try:
                return method(self, *args, **kwargs)
            finally:
                where.pop()

        return spy

    for cls in (MoveCheckedOnDevice, MoveChecked):
        monkeypatch.setattr(cls, "choose", spying("choose", cls.choose))
    after = spying("after", MoveCheckedOnDevice.raise_if_illegal)
    monkeypatch.setattr(MoveCheckedOnDevice, "raise_if_illegal", after)
    return counts


@pytest.mark.parametrize("static", [True, False])
def test_a_replayable_policy_written_elsewhere_runs_without_a_host_read_per_step(
    host_reads, static
):
    policy = ReplayableForeign()
    assert isinstance(with_move_check(policy), MoveCheckedOnDevice)
    model = Spinn(5, 4)
    model.static_shapes = static  # True: the path a CUDA graph replays
    inputs, mask, _ = make_batch(LENGTHS, 5, random.Random(0))
    output = model(inputs, mask, policy=policy)
    assert host_reads == {"choose": 0, "after": 1}  # one read per pass, after it
    assert output.mode == "foreign"
    # The same trees as the host-checked run of an old-style policy, which reads every step.
    host_checked = model(inputs, mask, policy=OldStyle())
    assert torch.equal(output.transitions, host_checked.transitions)
    assert host_reads["choose"] >= 2 * max(LENGTHS) - 1


def test_a_replayable_policy_written_elsewhere_is_replayed_by_the_graphs():
    model = Spinn(5, 4, **PARSER)
    inputs, mask, _ = make_batch(LENGTHS, 5, random.Random(0))
    passes = GraphedPasses(model, batch_size=8, capture=False)
    output = passes(inputs, mask, None, with_move_check(ReplayableForeign()))
    assert output is not None and passes.eager == {}
    assert torch.equal(output.transitions, model(inputs, mask, policy=OldStyle()).transitions)


@pytest.mark.parametrize("graphed", [False, True])
def test_a_wrong_move_of_a_replayable_policy_is_still_a_clear_error(graphed):
    model = Spinn(5, 4, **PARSER)
    inputs, mask, _ = make_batch(LENGTHS, 5, random.Random(0))

    def run(policy):
        if graphed:  # the bucket's pass, as a graph replays it: the record is one of its outputs
            passes = GraphedPasses(model, batch_size=8, capture=False)
            assert passes(inputs, mask, None, with_move_check(policy)) is not None
        else:
            model(inputs, mask, policy=policy)

    illegal = r"ReplayableForeign.choose chose an illegal move at step 0 .*step\.legal\(action\)"
    with pytest.raises(ValueError, match=illegal):
        run(ReplayableForeign(tr.REDUCE, raw=True))  # REDUCE on an empty stack
    with pytest.raises(ValueError, match=r"neither SHIFT \(0\) nor REDUCE \(1\) at step 2"):
        run(ReplayableForeign(2))  # steps 0 and 1 are forced SHIFTs, then 2 stays 2
    with pytest.raises(ValueError, match="chose an illegal move at step 3 "):
        run(ReplayableForeign(tr.SHIFT, raw=True))  # the 3-word sentence's buffer is empty
