"""Transition policies chosen in configs (`spinn_core.policy_registry`, the encoder's
`training_policy` / `evaluation_policy`), a policy of one's own as one registered class, and
the messages a mistaken policy gets: an illegal move, a forgotten `needs_parser = False`, an
unknown name or argument."""

import logging
import random

import pytest
import torch
from allennlp.common import Params
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.testing import make_batch
from spinn_core.policies import (
    BeamSearch,
    Choice,
    Given,
    Greedy,
    Mixed,
    MoveChecked,
    Sampled,
    SoftStrengths,
    Step,
    StraightThroughGumbel,
    TransitionPolicy,
    with_move_check,
)
from spinn_core.policy_registry import policy_from_config, register_policy, registered_policies
from spinn_core.spinn import Spinn
from spinn_core.transitions import PAD, REDUCE, SHIFT, parse_to_transitions


@register_policy("test_reduce_when_possible")
class ReduceWhenPossible(TransitionPolicy):
    """REDUCE wherever it is legal: the left-branching tree (needs no parser)."""

    mode = "reduce_when_possible"
    needs_parser = False

    def choose(self, step: Step) -> Choice:
        must_shift, _ = step.forced()
        return Choice(step.legal(torch.ones_like(must_shift, dtype=torch.long)))


class IgnoresTheRules(TransitionPolicy):
    """Always REDUCE, without `step.legal`: illegal at the first step."""

    mode = "ignores_the_rules"
    needs_parser = False

    def choose(self, step: Step) -> Choice:
        must_shift, _ = step.forced()
        return Choice(torch.full_like(must_shift, REDUCE, dtype=torch.long))


class ForgetsNeedsParser(TransitionPolicy):
    """Does not read the logits, but leaves `needs_parser` at its default (True)."""

    mode = "forgets"

    def choose(self, step: Step) -> Choice:
        must_shift, _ = step.forced()
        return Choice(step.legal(torch.zeros_like(must_shift, dtype=torch.long)))


def left_branching(length: int):
    tree = "w0"
    for i in range(1, length):
        tree = f"( {tree} w{i} )"
    return parse_to_transitions(tree)[1]


def test_every_policy_of_the_package_is_registered_by_name():
    expected = {
        "given": Given,
        "greedy": Greedy,
        "beam_search": BeamSearch,
        "mixed": Mixed,
        "sampled": Sampled,
        "soft": SoftStrengths,
        "straight_through_gumbel": StraightThroughGumbel,
    }
    assert set(expected) <= set(registered_policies())
    assert type(policy_from_config({"type": "sampled", "temperature": 0.5})) is Sampled
    assert policy_from_config({"type": "beam_search", "width": 3}).width == 3
    for name, cls in expected.items():
        arguments = {"width": 2} if name == "beam_search" else {}
        if name == "mixed":
            arguments = {"self_transition_prob": 0.5}
        assert type(policy_from_config({"type": name, **arguments})) is cls


def test_unknown_names_and_arguments_are_refused_with_what_exists():
    with pytest.raises(ValueError, match=r"no transition policy is registered as 'nope'.*greedy"):
        policy_from_config({"type": "nope"}, "training_policy")
    with pytest.raises(ValueError, match="Sampled takes.*temperature"):
        policy_from_config({"type": "sampled", "temperture": 0.5}, "training_policy")
    with pytest.raises(ValueError, match='must be an object with a "type"'):
        policy_from_config({"temperature": 0.5}, "training_policy")
    with pytest.raises(ValueError, match="is taken by"):
        register_policy("greedy")(ReduceWhenPossible)


def test_a_policy_of_ones_own_is_chosen_from_a_config(caplog):
    encoder = SpinnEncoder.from_params(
        Params(
            {
                "input_dim": 5,
                "hidden_dim": 4,
                "training_policy": {"type": "test_reduce_when_possible"},
                "evaluation_policy": {"type": "test_reduce_when_possible"},
            }
        )
    )
    inputs, mask, _ = make_batch([4, 1, 6, 2], 5, random.Random(0))
    for training in (True, False):
        encoder.train(training)
        with caplog.at_level(logging.WARNING):
            output = encoder.encode(inputs, mask)
        assert output.mode == "reduce_when_possible"
        for row, length in zip(output.transitions.tolist(), [4, 1, 6, 2]):
            assert [t for t in row if t != PAD] == left_branching(length)
    # Not the balanced default tree, so no warning that says it is.
    assert "balanced binary tree" not in caplog.text


def test_a_policy_that_ignores_the_legal_moves_gets_a_message_not_an_index_error():
    model = Spinn(5, 4)
    inputs, mask, _ = make_batch([3, 2], 5, random.Random(0))
    with pytest.raises(
        ValueError, match=r"IgnoresTheRules.choose chose an illegal move.*step\.legal"
    ):
        model(inputs, mask, policy=IgnoresTheRules())


def test_a_policy_that_forgets_needs_parser_is_told_what_to_set():
    model = Spinn(5, 4)
    inputs, mask, _ = make_batch([3, 2], 5, random.Random(0))
    with pytest.raises(ValueError, match="set needs_parser = False on its class"):
        model(inputs, mask, policy=ForgetsNeedsParser())
    with pytest.raises(ValueError, match="needs_parser = False"):
        SpinnEncoder.from_params(
            Params({"input_dim": 5, "hidden_dim": 4, "evaluation_policy": {"type": "greedy"}})
        )


def test_only_policies_written_elsewhere_are_checked():
    for policy in (Given(), Greedy(), Sampled(), Mixed(0.5), BeamSearch(2), SoftStrengths()):
        assert with_move_check(policy) is policy
    checked = with_move_check(ReduceWhenPossible())
    assert isinstance(checked, MoveChecked) and checked.mode == "reduce_when_possible"
    assert not checked.needs_parser


def test_settings_a_configured_policy_would_override_are_refused():
    """Old keys beside the policy they would have chosen (a 0.2 config with a policy added)."""
    sampled = {"type": "sampled"}
    base = {"type": "spinn", "input_dim": 5, "hidden_dim": 4, "tracking_dim": 3}
    base["predict_transitions"] = True
    with pytest.raises(ValueError, match="self_transition_prob would not be read"):
        Seq2VecEncoder.from_params(
            Params({**base, "self_transition_prob": 0.5, "training_policy": sampled})
        )
    with pytest.raises(ValueError, match="beam_size would not be read"):
        Seq2VecEncoder.from_params(Params({**base, "beam_size": 2, "evaluation_policy": sampled}))


def test_shift_and_reduce_are_the_moves_the_example_uses():
    # The registry's docstring example relies on REDUCE = 1 (ones) and SHIFT = 0.
    assert (SHIFT, REDUCE) == (0, 1)
