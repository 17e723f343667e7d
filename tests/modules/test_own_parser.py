"""The `spinn` encoder with a parser of its own (`parser` block; `spinn_core.parser_network`): the
composition follows exactly the trees the parser took, level by level; no gradient crosses
between parser and composition; each sentence alone equals itself in a padded batch; PPO's
replays rescore the moves without composing; settings that cannot work are refused by name.
Float64 throughout, so equalities are exact claims."""

import math
import random

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from spinn_allennlp.modules.encoder_settings import TrackerSettings
from spinn_allennlp.modules.own_parser import OwnParser
from spinn_allennlp.modules.policy_gradient import PolicyGradient, tree_scores
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.testing import make_batch
from spinn_core.policies import Given, Replayed, Sampled
from spinn_core.runners import run_levelwise
from spinn_core.spinn import pick_runner
from spinn_core.transitions import PAD, is_valid

LENGTHS = [4, 7, 1, 5, 3, 6]


def vocabulary(size: int = 9) -> Vocabulary:
    vocab = Vocabulary()
    for index in range(size):
        vocab.add_token_to_namespace(f"w{index}")
    return vocab


def setup(embedding_dim: int = 4, **encoder_options):
    torch.manual_seed(0)
    encoder = SpinnEncoder(
        5,
        4,
        parser=OwnParser(hidden_dim=3, tracking_dim=2, embedding_dim=embedding_dim),
        vocab=vocabulary(),
        **encoder_options,
    ).double()
    inputs, mask, gold = make_batch(LENGTHS, 5, random.Random(0), "cpu", torch.float64)
    inputs.requires_grad_(True)
    token_ids = torch.randint(2, 11, mask.shape) * mask
    return encoder, inputs, mask, gold, token_ids


def named_grads(module):
    return {name: p.grad for name, p in module.named_parameters()}


def test_the_composition_follows_exactly_the_parsers_trees_level_by_level():
    encoder, inputs, mask, _, token_ids = setup()
    encoder.train()
    torch.manual_seed(3)
    output = encoder.encode(inputs, mask, policy=Sampled(), parser_tokens=token_ids)
    assert output.mode == "sampled" and output.action_log_probs is not None
    for row, length in zip(output.transitions.tolist(), LENGTHS):
        assert is_valid([t for t in row if t != PAD], length)
    # The same sentences composed over those transitions as given trees, level by level.
    spinn = encoder.spinn
    assert pick_runner(Given(), spinn.parts(), spinn.levelwise, inputs) is run_levelwise
    alone = encoder.spinn(inputs, mask, output.transitions, policy=Given(), runner=run_levelwise)
    assert torch.equal(output.sentence, alone.sentence)


def test_no_gradient_crosses_between_parser_and_composition():
    encoder, inputs, mask, _, token_ids = setup()
    encoder.train()
    torch.manual_seed(1)
    output = encoder.encode(inputs, mask, policy=Sampled(), parser_tokens=token_ids)
    # The task's loss: the composition and the words, never the parser.
    output.sentence.pow(2).sum().backward(retain_graph=True)
    assert all(g is None for g in named_grads(encoder.parser).values())
    assert all(g is not None and g.abs().sum() > 0 for g in named_grads(encoder.spinn).values())
    assert inputs.grad is not None and inputs.grad.abs().sum() > 0
    # The parser's terms: the parser alone.
    encoder.zero_grad()
    inputs.grad = None
    (output.action_log_probs.sum() + output.action_entropy.sum()).backward()
    assert all(g is None for g in named_grads(encoder.spinn).values())
    assert inputs.grad is None
    parser = named_grads(encoder.parser)
    assert parser["embedding.weight"].abs().sum() > 0
    assert parser["spinn.tracker.transition_classifier.weight"].abs().sum() > 0


def test_without_embeddings_the_parser_reads_the_word_vectors_detached():
    encoder, inputs, mask, _, _ = setup(embedding_dim=0)
    assert not encoder.parser_reads_token_ids
    encoder.train()
    output = encoder.encode(inputs, mask, policy=Sampled())
    output.action_log_probs.sum().backward()
    assert inputs.grad is None


@pytest.mark.parametrize("training", [True, False])
def test_each_sentence_alone_equals_itself_in_the_batch(training):
    encoder, inputs, mask, gold, token_ids = setup()
    encoder.train(training)
    # Training with gold trees: teacher forcing (Given); evaluation: the greedy parse.
    batched = encoder.encode(inputs, mask, gold if training else None, parser_tokens=token_ids)
    assert batched.mode == ("given" if training else "predicted")
    for row, length in enumerate(LENGTHS):
        steps = 2 * length - 1
        alone = encoder.encode(
            inputs[row : row + 1, :length],
            mask[row : row + 1, :length],
            gold[row : row + 1, :steps] if training else None,
            parser_tokens=token_ids[row : row + 1, :length],
        )
        torch.testing.assert_close(alone.sentence[0], batched.sentence[row], atol=1e-12, rtol=0)
        assert alone.transitions[0].tolist() == batched.transitions[row, :steps].tolist()
        torch.testing.assert_close(
            alone.transition_logits[0],
            batched.transition_logits[row, :steps],
            atol=1e-12,
            rtol=0,
        )


def test_teacher_forcing_follows_the_gold_trees_and_scores_them():
    encoder, inputs, mask, gold, token_ids = setup()
    encoder.train()
    output = encoder.encode(inputs, mask, gold, parser_tokens=token_ids)
    assert torch.equal(output.transitions, gold[:, : output.transitions.size(1)])
    assert output.transition_logits is not None
    assert output.transition_logits.shape[:2] == output.transitions.shape


def test_a_replay_rescores_the_recorded_moves_without_composing():
    encoder, inputs, mask, _, token_ids = setup()
    encoder.train()
    recording = Sampled(record=True)
    drawn = encoder.encode(inputs, mask, policy=recording, parser_tokens=token_ids)
    replayed = encoder.encode(
        inputs, mask, policy=Replayed(recording.draws), parser_tokens=token_ids
    )
    assert torch.equal(replayed.transitions, drawn.transitions)
    torch.testing.assert_close(replayed.action_log_probs, drawn.action_log_probs)
    # The composition did not run: nothing of it is in the replay's graph.
    assert not replayed.sentence.requires_grad and replayed.sentence.abs().sum() == 0
    replayed.action_log_probs.sum().backward()
    assert all(g is None for g in named_grads(encoder.spinn).values())


def test_beam_search_at_evaluation_parses_then_composes():
    encoder, inputs, mask, _, token_ids = setup(
        evaluation_policy={"type": "beam_search", "width": 3}
    )
    encoder.eval()
    beam = encoder.encode(inputs, mask, parser_tokens=token_ids)
    assert beam.beam_log_probs is not None
    composed = encoder.spinn(inputs, mask, beam.transitions, policy=Given())
    assert torch.equal(beam.sentence, composed.sentence)


def test_parser_parameters_are_the_parser_networks():
    encoder, *_ = setup()
    assert {id(p) for p in encoder.parser_parameters()} == {
        id(p) for p in encoder.parser.parameters()
    }
    encoder.parser_frozen = True
    assert encoder.parser_frozen and all(p.requires_grad for p in encoder.spinn.parameters())


def test_missing_token_ids_and_conflicting_settings_are_refused_by_name():
    encoder, inputs, mask, _, _ = setup()
    with pytest.raises(ValueError, match="pass parser_tokens"):
        encoder.encode(inputs, mask)
    parser = OwnParser(hidden_dim=3, tracking_dim=2)
    for options, named in [
        ({"tracker": TrackerSettings(2, predict_transitions=True)}, "predict_transitions"),
        ({"training_policy": {"type": "soft"}}, "parser block drives a discrete stack"),
        ({"evaluation_policy": {"type": "soft"}}, "evaluation_policy cannot be soft"),
    ]:
        with pytest.raises(ValueError, match=named):
            SpinnEncoder(5, 4, parser=parser, **options)
    with pytest.raises(ValueError, match="needs the vocabulary"):
        SpinnEncoder(5, 4, parser=OwnParser(hidden_dim=3, tracking_dim=2, embedding_dim=4))
    with pytest.raises(ConfigurationError, match="tracking_dim must be positive"):
        OwnParser(hidden_dim=3, tracking_dim=0)
    # Options that need a parser accept this one.
    SpinnEncoder(
        5,
        4,
        parser=parser,
        transition_loss_weight=1.0,
        training_policy={"type": "mixed", "self_transition_prob": 0.5},
    )


def test_the_parser_block_from_a_config_gets_the_vocabulary():
    vocab = vocabulary(12)
    encoder = SpinnEncoder.from_params(
        Params(
            {
                "input_dim": 5,
                "hidden_dim": 4,
                "parser": {"hidden_dim": 3, "tracking_dim": 2, "embedding_dim": 6},
            }
        ),
        vocab=vocab,
    )
    assert encoder.parser.embedding.num_embeddings == vocab.get_vocab_size("tokens")
    assert encoder.has_parser and encoder.spinn.tracker is None


def test_running_std_scales_the_advantages_as_havrylov_et_al():
    """The running variance starts at 1, folds in each batch's advantage variance with decay
    0.9, and divides by its square root only where that exceeds 1."""
    gradient = PolicyGradient(running_std=0.9, entropy_weight=0.0)
    assert not gradient.normalize_advantage
    # The state is a float32 buffer, as the model's parameters.
    variance = torch.ones((), dtype=torch.float32)
    small = torch.tensor([0.1, -0.1, 0.2], dtype=torch.float64)
    scaled = gradient._scaled(small)
    variance = variance * 0.9 + (0.1 * small.var()).float()
    assert variance < 1 and torch.equal(scaled, small)
    large = torch.tensor([30.0, -20.0, 5.0], dtype=torch.float64)
    scaled = gradient._scaled(large)
    variance = variance * 0.9 + (0.1 * large.var()).float()
    assert variance > 1
    torch.testing.assert_close(scaled, large / variance.sqrt(), atol=1e-12, rtol=0)
    # In the model's state, so that --recover resumes it.
    assert torch.equal(gradient.state_dict()["advantage_variance"], variance)
    with pytest.raises(ConfigurationError, match="choose one"):
        PolicyGradient(running_std=0.9, normalize_advantage=True)


def test_normalized_entropy_is_the_mean_per_free_choice_over_log_2():
    encoder, inputs, mask, _, token_ids = setup()
    encoder.train()
    output = encoder.encode(inputs, mask, policy=Sampled(), parser_tokens=token_ids)
    _, summed = tree_scores([output])
    _, normalized = tree_scores([output], normalized_entropy=True)
    for row, length in enumerate(LENGTHS):
        entropies = output.action_entropy[row]
        # A sentence of n words has 2n - 1 moves; the first two and the last are forced.
        free = int((entropies > 0).sum())
        assert free <= max(0, 2 * length - 4)
        torch.testing.assert_close(summed[row], entropies.sum())
        expected = entropies.sum() / (max(free, 1) * math.log(2.0))
        torch.testing.assert_close(normalized[row], expected)
        assert 0.0 <= float(normalized[row]) <= 1.0 + 1e-12
