import logging
import random

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.confidence_checks.normalization_bias_verification import (
    NormalizationBiasVerification,
)
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.modules import SpinnEncoder, TreeEncoder
from spinn_allennlp.modules.added_losses import encoder_loss_metrics
from spinn_allennlp.modules.encoder_settings import (
    ProjectionSettings,
    SpeedSettings,
    TrackerSettings,
)
from spinn_allennlp.modules.spinn_encoder import UNTRAINED_PARSER_BATCHES
from spinn_allennlp.testing import make_batch
from spinn_core import transitions as tr
from spinn_core.compositions import registered_compositions
from spinn_core.output import GIVEN, MIXED, PREDICTED
from spinn_core.policies import (
    BeamSearch,
    Choice,
    Greedy,
    Sampled,
    Step,
    StraightThroughGumbel,
    TransitionPolicy,
)
from spinn_core.supervision import transition_loss
from spinn_core.transitions import REDUCE, SHIFT


def test_from_params_with_allennlp_names():
    encoder = Seq2VecEncoder.from_params(
        Params({"type": "spinn", "input_dim": 30, "hidden_dim": 20})
    )
    assert isinstance(encoder, SpinnEncoder) and isinstance(encoder, TreeEncoder)
    assert encoder.get_input_dim() == 30 and encoder.get_output_dim() == 20
    assert encoder.spinn.tracker is None and not encoder.has_parser  # SPINN-PI-NT by default
    inputs = torch.randn(3, 4, 30)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    assert encoder(inputs, mask).shape == (3, 20)


@pytest.mark.parametrize("composition", registered_compositions())
def test_every_composition_passes_allennlp_s_normalization_bias_check(composition):
    # AllenNLP's trainer runs this check on the first batch and stops training when it fails
    # (it flags any biased layer whose call is followed by a normalisation module's); GRC's
    # biased gate layer before its layer norm once stopped every run with `composition: grc`.
    encoder = Seq2VecEncoder.from_params(
        Params({"type": "spinn", "input_dim": 4, "hidden_dim": 3, "composition": composition})
    )
    encoder.train()
    check = NormalizationBiasVerification(encoder)
    assert check.check((torch.randn(2, 5, 4), torch.ones(2, 5).bool())), check.detected_pairs


def test_a_policy_of_our_own_runs_through_the_registered_encoder():
    class ReduceWhenLegal(TransitionPolicy):
        mode = "reduce_when_legal"
        needs_parser = False

        def choose(self, step: Step) -> Choice:
            must_shift, _ = step.forced()
            return Choice(torch.where(must_shift, SHIFT, REDUCE))

    encoder = Seq2VecEncoder.by_name("spinn")(input_dim=4, hidden_dim=3)
    inputs, mask = torch.randn(2, 4, 4), torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]]).bool()
    out = encoder.encode(inputs, mask, policy=ReduceWhenLegal())
    assert out.mode == "reduce_when_legal"
    assert out.transitions[0].tolist() == tr.left_branching_transitions(4)
    assert out.transitions[1, :5].tolist() == tr.left_branching_transitions(3)
    given = encoder.encode(inputs, mask, out.transitions)  # the same trees, given
    torch.testing.assert_close(out.sentence, given.sentence)


def test_forward_is_the_sentence_of_encode():
    torch.manual_seed(0)
    encoder = SpinnEncoder(5, 4, tracker=TrackerSettings(3)).eval()
    inputs, mask = torch.randn(2, 3, 5), torch.tensor([[1, 1, 1], [1, 1, 0]]).bool()
    transitions = torch.tensor([[0, 0, 1, 0, 1], [0, 0, 1, -1, -1]])
    output = encoder.encode(inputs, mask, transitions, return_nodes=True)
    assert torch.equal(encoder(inputs, mask, transitions), output.sentence)
    assert output.node_states.shape == (2, 5, 8) and output.mode == GIVEN


def test_the_policy_in_training_and_at_evaluation():
    plain = SpinnEncoder(4, 3, tracker=TrackerSettings(2))
    parser = SpinnEncoder(4, 3, tracker=TrackerSettings(2, predict_transitions=True))
    scheduled = SpinnEncoder(
        4,
        3,
        tracker=TrackerSettings(2, predict_transitions=True),
        training_policy={"type": "mixed", "self_transition_prob": 0.3},
    )
    gold_at_test = SpinnEncoder(
        4,
        3,
        tracker=TrackerSettings(2, predict_transitions=True),
        evaluation_policy={"type": "given"},
    )
    assert parser.has_parser and not plain.has_parser
    assert plain.policy(False).mode == GIVEN  # the balanced default tree
    assert parser.policy(False).mode == PREDICTED
    assert parser.train().policy(True).mode == GIVEN
    assert parser.eval().policy(True).mode == PREDICTED
    assert scheduled.train().policy(True).mode == MIXED
    assert gold_at_test.eval().policy(True).mode == GIVEN


def test_beam_size_searches_at_evaluation_only():
    torch.manual_seed(0)
    encoder = SpinnEncoder(
        5,
        4,
        tracker=TrackerSettings(3, predict_transitions=True),
        evaluation_policy={"type": "beam_search", "width": 3},
    ).double()
    inputs, mask, gold = parser_batch()
    assert isinstance(encoder.eval().policy(True), BeamSearch)
    assert isinstance(encoder.eval().policy(False), BeamSearch)
    searched = encoder.eval().encode(inputs, mask, gold)
    assert searched.mode == PREDICTED and searched.beam_log_probs.shape == (inputs.size(0),)
    # Training is unchanged: gold trees followed (teacher forcing), greedy without them.
    assert encoder.train().policy(True).mode == GIVEN
    assert isinstance(encoder.train().policy(False), Greedy)
    assert encoder.train().encode(inputs, mask, gold).beam_log_probs is None


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="tracking_dim must be positive"):
        SpinnEncoder(4, 3, tracker=TrackerSettings(0, predict_transitions=True))
    with pytest.raises(ValueError, match="composition"):
        SpinnEncoder(4, 3, composition="gru")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        SpinnEncoder(
            4,
            3,
            tracker=TrackerSettings(2, predict_transitions=True),
            training_policy={"type": "mixed", "self_transition_prob": 2.0},
        )
    with pytest.raises(ValueError, match="at least 1"):
        SpinnEncoder(
            4,
            3,
            tracker=TrackerSettings(2, predict_transitions=True),
            evaluation_policy={"type": "beam_search", "width": 0},
        )


@pytest.mark.parametrize(
    "old, named",
    [
        ({"predict_transitions": True}, "predict_transitions need a tracking LSTM"),
        ({"tracking_dim": 2, "self_transition_prob": 0.5}, "self_transition_prob: settings of"),
        ({"tracking_dim": 2, "beam_size": 4}, "beam_size: settings of"),
        ({"tracking_dim": 2, "predict_transitions": True, "beam_size": 0}, "at least 1"),
    ],
)
def test_bad_old_keys_are_refused_by_their_names(old, named):
    with pytest.raises(ConfigurationError, match=named):
        Seq2VecEncoder.from_params(
            Params({"type": "spinn", "input_dim": 4, "hidden_dim": 3, **old})
        )


# --- a parser inside any model: trained by the encoder, or loudly untrained ----------------

LOGGER = "spinn_allennlp.modules.spinn_encoder"


def parser_batch(seed=0):
    rng = random.Random(seed)
    lengths = [rng.randint(1, 9) for _ in range(6)]
    return make_batch(lengths, 5, rng, "cpu", torch.float64)


def test_transition_loss_weight_trains_the_parser_through_forward():
    """With `transition_loss_weight`, whatever loss a model puts on the sentence vectors also
    carries weight x the transition loss into the parser, exactly."""
    torch.manual_seed(0)
    encoder = (
        SpinnEncoder(
            5, 4, transition_loss_weight=2.5, tracker=TrackerSettings(3, predict_transitions=True)
        )
        .double()
        .train()
    )
    inputs, mask, gold = parser_batch()
    classifier = encoder.spinn.tracker.transition_classifier.weight

    encoder.zero_grad()
    encoder(inputs, mask, gold).sum().backward()
    with_loss = classifier.grad.clone()

    encoder.zero_grad()
    output = encoder.encode(inputs, mask, gold)
    (output.sentence.sum() + 2.5 * transition_loss(output, gold)).backward()
    torch.testing.assert_close(with_loss, classifier.grad, atol=1e-12, rtol=0)
    assert with_loss.abs().sum() > 0

    # Evaluation, or no gold transitions: nothing is attached.
    encoder.eval()
    assert encoder(inputs, mask, gold).grad_fn is not None  # still differentiable
    encoder.zero_grad()
    encoder(inputs, mask, gold).sum().backward()
    assert classifier.grad is None or classifier.grad.abs().sum() == 0


def test_what_the_encoder_adds_to_the_loss_is_reported():
    """The weighted transition loss that `forward` attaches is the metric
    `encoder_transition_loss` (its mean over training batches since the last reset) of the
    models, through `encoder_loss_metrics`; nothing is added, or reported, in evaluation."""
    torch.manual_seed(0)
    tracker = TrackerSettings(3, predict_transitions=True)
    encoder = SpinnEncoder(5, 4, transition_loss_weight=2.5, tracker=tracker).double().train()
    inputs, mask, gold = parser_batch()
    losses = []
    for _ in range(2):
        encoder(inputs, mask, gold)
        losses.append(2.5 * float(transition_loss(encoder.encode(inputs, mask, gold), gold)))
    metrics = encoder_loss_metrics(encoder, reset=True)
    assert metrics == {"encoder_transition_loss": pytest.approx(sum(losses) / 2, abs=1e-12)}
    assert losses[0] > 0
    assert encoder_loss_metrics(encoder, reset=False) == {}
    encoder.eval()(inputs, mask, gold)
    assert encoder_loss_metrics(encoder, reset=False) == {}
    assert encoder_loss_metrics(torch.nn.LSTM(2, 2), reset=False) == {}  # type: ignore[arg-type]


def test_a_model_training_its_parser_gets_no_warning(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    torch.manual_seed(0)
    encoder = (
        SpinnEncoder(
            5, 4, transition_loss_weight=1.0, tracker=TrackerSettings(3, predict_transitions=True)
        )
        .double()
        .train()
    )
    optimizer = torch.optim.Adam(encoder.parameters(), lr=0.05)
    inputs, mask, gold = parser_batch()
    losses = []
    for _ in range(UNTRAINED_PARSER_BATCHES + 20):
        optimizer.zero_grad()
        encoder(inputs, mask, gold).pow(2).sum().backward()
        optimizer.step()
        losses.append(transition_loss(encoder.encode(inputs, mask, gold), gold).item())
    assert losses[-1] < 0.5 * losses[0]  # the parser learns the gold trees
    assert not [r for r in caplog.records if r.name == LOGGER]


def test_an_untrained_parser_is_reported_once(caplog):
    """`predict_transitions` in a model that gives it no gold transitions (e.g. AllenNLP's
    basic_classifier): the parser follows an argmax nothing can train. Both warnings, once."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    encoder = SpinnEncoder(5, 4, tracker=TrackerSettings(3, predict_transitions=True)).train()
    inputs, mask, _ = parser_batch()
    for _ in range(2 * UNTRAINED_PARSER_BATCHES):
        encoder(inputs.float(), mask).sum().backward()
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(messages) == 2
    assert "no gold transitions reach it" in messages[0]
    assert (
        f"no gradient has reached the parser (transition classifier) in "
        f"{UNTRAINED_PARSER_BATCHES} training batches" in messages[1]
    )


def test_a_frozen_parser_trains_the_rest_without_warning(caplog):
    """A parser frozen on purpose (requires_grad off, e.g. trained elsewhere): the probe
    cannot hook its weights (torch refuses a hook on a tensor without gradient, which crashed
    the first training batch), and no warning is due."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    encoder = SpinnEncoder(5, 4, tracker=TrackerSettings(3, predict_transitions=True)).train()
    for parameter in encoder.spinn.parser_parameters():
        parameter.requires_grad_(False)
    inputs, mask, _ = parser_batch()
    for policy in (None, Sampled()):
        for _ in range(UNTRAINED_PARSER_BATCHES + 1):
            encoder.encode(inputs.float(), mask, policy=policy).sentence.sum().backward()
    assert not [r for r in caplog.records if r.name == LOGGER]
    assert encoder.spinn.compose.linear.weight.grad.abs().sum() > 0


@pytest.mark.parametrize(
    "options",
    [
        dict(training_policy={"type": "soft"}, evaluation_policy={"type": "soft"}),
        dict(training_policy={"type": "straight_through_gumbel"}),
    ],
)
def test_a_parser_the_task_trains_through_the_stack_gets_no_warning(caplog, options):
    """Models 4's soft stack and straight-through Gumbel train the parser inside the loop,
    through the strengths, with no transition loss: the probe must see that gradient."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    encoder = SpinnEncoder(
        5, 4, **options, tracker=TrackerSettings(3, predict_transitions=True)
    ).train()
    inputs, mask, _ = parser_batch()
    for _ in range(UNTRAINED_PARSER_BATCHES + 1):
        encoder(inputs.float(), mask).sum().backward()
    assert not [r for r in caplog.records if r.name == LOGGER]
    weight = encoder.spinn.tracker.transition_classifier.weight
    assert weight.grad is not None and bool(weight.grad.abs().sum() > 0)
    assert not weight._backward_hooks  # the probe's hook is gone once it has fired


def test_a_parser_trained_by_reinforce_gets_no_warning(caplog):
    """Sampling: the gradient reaches the parser through the moves' log-probabilities only."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    encoder = SpinnEncoder(5, 4, tracker=TrackerSettings(3, predict_transitions=True)).train()
    inputs, mask, _ = parser_batch()
    for _ in range(UNTRAINED_PARSER_BATCHES + 1):
        output = encoder.encode(inputs.float(), mask, policy=Sampled())
        output.action_log_probs.sum().backward()
    assert not [r for r in caplog.records if r.name == LOGGER]


def test_gold_transitions_without_any_loss_are_reported(caplog):
    """A model that passes gold transitions but never adds the transition loss."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    encoder = (
        SpinnEncoder(5, 4, tracker=TrackerSettings(3, predict_transitions=True)).double().train()
    )
    inputs, mask, gold = parser_batch()
    for _ in range(UNTRAINED_PARSER_BATCHES):
        encoder.encode(inputs, mask, gold).sentence.sum().backward()
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(messages) == 1 and "nothing trains it" in messages[0]


def test_transition_loss_weight_needs_a_parser():
    with pytest.raises(ValueError, match="needs tracker.predict_transitions"):
        SpinnEncoder(4, 3, transition_loss_weight=1.0)


# --- the Seq2VecEncoder contract: mask=None, and which setting a size mismatch needs --------


@pytest.mark.parametrize("tracking_dim", [0, 3])
def test_no_mask_means_every_word_is_real(tracking_dim):
    """As AllenNLP's own Seq2VecEncoders: `mask=None` encodes every position as a word."""
    torch.manual_seed(0)
    tracker = TrackerSettings(tracking_dim) if tracking_dim else None
    encoder = SpinnEncoder(5, 4, tracker=tracker).double().eval()
    inputs = torch.randn(3, 6, 5, dtype=torch.float64)
    full = torch.ones(3, 6, dtype=torch.bool)
    torch.testing.assert_close(encoder(inputs, None), encoder(inputs, full), atol=0, rtol=0)
    torch.testing.assert_close(encoder(inputs), encoder(inputs, full), atol=0, rtol=0)
    output = encoder.encode(inputs, None)
    assert output.transitions.shape == (3, 11)


def test_child_sum_encoder_takes_no_mask_too():
    torch.manual_seed(0)
    encoder = Seq2VecEncoder.from_params(
        Params({"type": "child_sum_tree_lstm", "input_dim": 5, "hidden_dim": 4})
    ).double()
    inputs = torch.randn(2, 4, 5, dtype=torch.float64)
    full = torch.ones(2, 4, dtype=torch.bool)
    torch.testing.assert_close(encoder(inputs, None), encoder(inputs, full), atol=0, rtol=0)


@pytest.mark.parametrize("encoder_type", ["spinn", "child_sum_tree_lstm"])
def test_word_vectors_of_the_wrong_size_name_the_setting_to_change(encoder_type):
    """Not torch's `mat1 and mat2 shapes cannot be multiplied`: which sizes, which setting."""
    encoder = Seq2VecEncoder.from_params(
        Params({"type": encoder_type, "input_dim": 12, "hidden_dim": 4})
    )
    inputs, mask = torch.randn(2, 3, 13), torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(ConfigurationError) as error:
        encoder(inputs, mask)
    message = str(error.value)
    assert "input_dim" in message and "12" in message and "13" in message
    assert "embedder" in message


def test_balanced_trees_by_default_are_reported_once_with_the_way_to_real_trees(caplog):
    """A tree encoder in a model that never passes it transitions (AllenNLP's basic_classifier)
    composes over balanced trees: said once in training, with the path to real trees."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    encoder = SpinnEncoder(5, 4).train()
    inputs, mask, gold = parser_batch()
    encoder(inputs.float(), mask, gold)  # given trees: nothing to say
    assert not caplog.records
    for _ in range(3):
        encoder(inputs.float(), mask)
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(messages) == 1 and "balanced binary tree" in messages[0]
    for name in ("text_classification_transitions", "spinn_classifier", "your_own_model.md"):
        assert name in messages[0]


@pytest.mark.parametrize(
    "options,mode",
    [
        (dict(tracker=TrackerSettings(6)), GIVEN),
        (dict(tracker=TrackerSettings(6, predict_transitions=True)), GIVEN),
        (dict(tracker=TrackerSettings(6, predict_transitions=True)), PREDICTED),
        (dict(projection=ProjectionSettings(batch_norm=True)), GIVEN),
    ],
)
def test_bf16_mixed_precision_option(options, mode):
    """`mixed_precision: "bf16"` (a training option): every output float32, within the core's
    stated bf16 tolerance (tests/core/test_mixed_precision.py: 8u (1 + |x|), u = 2^-8) of the
    float32 encoder with the same weights, and a gradient for every parameter the float32
    encoder trains."""
    torch.manual_seed(0)
    reference = SpinnEncoder(12, 12, **options).train()
    if reference.has_parser:
        # A decisive parser: no two logits within bf16 rounding of each other, so both
        # encoders parse alike.
        with torch.no_grad():
            reference.spinn.tracker.transition_classifier.weight.mul_(30.0)
    mixed = SpinnEncoder(12, 12, **options, speed=SpeedSettings(mixed_precision="bf16")).train()
    mixed.load_state_dict(reference.state_dict())
    inputs, mask, transitions = make_batch([9, 3, 14, 1], 12, random.Random(5))
    given = transitions if mode == GIVEN else None
    outputs = []
    for encoder in (reference, mixed):
        if mode == PREDICTED:
            encoder.eval()
        encoder.zero_grad()
        out = encoder.encode(inputs, mask, given)
        loss = out.sentence.pow(2).sum()
        if out.transition_logits is not None:
            loss = loss + out.transition_logits.sum()
        loss.backward()
        outputs.append(out)
    ref, out = outputs
    assert torch.equal(ref.transitions, out.transitions)
    for name in ("sentence", "transition_logits"):
        expected, value = getattr(ref, name), getattr(out, name)
        if expected is None:
            assert value is None
            continue
        assert value.dtype == torch.float32
        expected, error = expected.detach(), (value - expected).detach().abs()
        # Logits are dot products whose terms may cancel: their error is relative to the
        # largest logit rather than to each.
        size = expected.abs() if name == "sentence" else expected.abs().max()
        assert (error <= 8 * 2**-8 * (1 + size)).all(), (name, float(error.max()))
    for (name, p), q in zip(reference.named_parameters(), mixed.parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            assert q.grad.dtype == torch.float32 and torch.isfinite(q.grad).all(), name


def test_mixed_precision_from_params_and_bad_values():
    encoder = Seq2VecEncoder.from_params(
        Params({"type": "spinn", "input_dim": 4, "hidden_dim": 3, "mixed_precision": "bf16"})
    )
    assert encoder.mixed_precision == "bf16"
    with pytest.raises(ValueError, match="mixed_precision"):
        SpinnEncoder(4, 3, speed=SpeedSettings(mixed_precision="fp16"))


# --- straight-through Gumbel (tests/core/test_straight_through.py has the estimator's) -----


def test_straight_through_gumbel_trains_and_evaluates_greedily():
    encoder = SpinnEncoder(
        5,
        4,
        tracker=TrackerSettings(3, predict_transitions=True),
        training_policy={"type": "straight_through_gumbel", "temperature": 0.5},
    )
    encoder.train()
    policy = encoder.policy(False)
    assert isinstance(policy, StraightThroughGumbel) and policy.temperature == 0.5
    inputs = torch.randn(2, 4, 5)
    mask = torch.tensor([[True] * 4, [True, True, False, False]])
    encoder(inputs, mask).sum().backward()
    grad = encoder.spinn.tracker.transition_classifier.weight.grad
    assert grad is not None and bool(grad.abs().sum() > 0)
    encoder.eval()
    assert isinstance(encoder.policy(False), Greedy)


@pytest.mark.parametrize(
    "options,setting",
    [
        (
            dict(gumbel_straight_through=True),
            "gumbel_straight_through is read only with soft_stack",
        ),
        (
            dict(soft_stack=True, gumbel_straight_through=True, strength_entropy_weight=0.1),
            "strength_entropy_weight",
        ),
    ],
)
def test_settings_that_do_not_go_with_straight_through_gumbel_are_named(options, setting):
    config = {"type": "spinn", "input_dim": 5, "hidden_dim": 4, "tracking_dim": 3}
    with pytest.raises(ValueError, match=setting):
        Seq2VecEncoder.from_params(Params({**config, "predict_transitions": True, **options}))
