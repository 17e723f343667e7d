"""Beam training through the `spinn` encoder: chosen in a config as `training_policy:
{"type": "beam_mixture", "width": K}`, with the parser reading the composition's nodes or with a
parser of its own (whose beam's trees the composition then follows, K trees a sentence). With a
width of at least the number of trees the sentence vector is the expectation of the
composition's root over every tree under the parser's distribution (float64), and the task's
gradient reaches the parser through the scores alone."""

import math
import random

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.modules.encoder_settings import TrackerSettings
from spinn_allennlp.modules.own_parser import OwnParser
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.testing import make_batch
from spinn_core.output import GIVEN, Mode
from spinn_core.policies import Given
from spinn_core.testing.trees import all_trees, tree_log_prob
from tools.testing.configs import (
    LISTOPS_SAMPLE,
    SNLI_SAMPLE,
    as_json,
    listops_config,
    listops_small_overrides,
    snli_config,
    snli_small_overrides,
)


def catalan(n: int) -> int:
    return math.comb(2 * n, n) // (n + 1)


def own_parser_encoder(width: int) -> SpinnEncoder:
    torch.manual_seed(0)
    encoder = SpinnEncoder(
        5,
        4,
        parser=OwnParser(hidden_dim=3, tracking_dim=2),
        training_policy={"type": "beam_mixture", "width": width},
    ).double()
    with torch.no_grad():  # a parser far from uniform, so that the trees weigh differently
        for parameter in encoder.parser.spinn.tracker.parameters():
            parameter.normal_(0.0, 1.0)
    return encoder


def test_with_a_parser_of_its_own_the_mixture_is_the_expectation_of_the_composition_s_root():
    rng = random.Random(0)
    for num_words in range(1, 6):
        encoder = own_parser_encoder(catalan(num_words - 1)).train()
        inputs, mask, _ = make_batch([num_words], 5, rng, "cpu", torch.float64)
        output = encoder.encode(inputs, mask)
        assert output.mode == Mode.BEAM
        # The parser reads its leaf LSTM's states of the words (not trained by the task).
        parser_words = encoder.parser.leaf_lstm(inputs)[0]
        expected = torch.zeros(4, dtype=torch.float64)
        for tree in all_trees(num_words):
            p = math.exp(tree_log_prob(encoder.parser.spinn, parser_words, mask, tree))
            root = encoder.spinn(inputs, mask, torch.tensor([tree]), policy=Given()).sentence[0]
            expected = expected + p * root
        torch.testing.assert_close(output.sentence[0], expected, atol=1e-12, rtol=0)
        # The composition's gradient reaches the parser through the scores only.
        if num_words >= 3:
            output.sentence.sum().backward()
            classifier = encoder.parser.spinn.tracker.transition_classifier
            assert classifier.weight.grad is not None
            assert float(classifier.weight.grad.abs().max()) > 1e-6


def test_evaluation_parses_greedily_unless_told_otherwise():
    encoder = own_parser_encoder(3).eval()
    inputs, mask, _ = make_batch([6, 2, 4], 5, random.Random(1), "cpu", torch.float64)
    greedy = encoder.encode(inputs, mask)
    assert greedy.mode == Mode.PREDICTED
    composed = encoder.spinn(inputs, mask, greedy.transitions, policy=Given())
    torch.testing.assert_close(greedy.sentence, composed.sentence, atol=1e-12, rtol=0)


def test_a_config_chooses_beam_training_and_the_parser_trains_from_the_task():
    """From a config, the parser reading the composition's nodes: in training the encoder
    follows the beam (its sentence vector a mixture), the parser gets a gradient from the task
    alone, and evaluation parses greedily."""
    params = Params(
        {
            "type": "spinn",
            "input_dim": 5,
            "hidden_dim": 4,
            "tracking_dim": 3,
            "predict_transitions": True,
            "composition_reads_tracker": False,
            "parser_trains_nodes": False,
            "training_policy": {"type": "beam_mixture", "width": 4},
        }
    )
    torch.manual_seed(2)
    encoder = Seq2VecEncoder.from_params(params, vocab=Vocabulary()).double()
    assert isinstance(encoder, SpinnEncoder) and encoder.parser_learns_from_task
    inputs, mask, gold = make_batch([6, 3, 5], 5, random.Random(2), "cpu", torch.float64)
    encoder.train()
    output = encoder.encode(inputs, mask, gold)
    assert output.mode == Mode.BEAM and output.beam_scores.shape == (3, 4)
    output.sentence.sum().backward()
    classifier = encoder.spinn.tracker.transition_classifier
    assert float(classifier.weight.grad.abs().max()) > 0
    encoder.eval()
    assert encoder.encode(inputs, mask, gold).mode == Mode.PREDICTED
    assert encoder.encode(inputs, mask, gold, policy=Given()).mode == GIVEN


def test_a_bad_width_is_refused_naming_the_setting():
    with pytest.raises(ValueError, match="training_policy 'beam_mixture'.*width"):
        SpinnEncoder(
            5,
            4,
            tracker=TrackerSettings(3, predict_transitions=True),
            training_policy={"type": "beam_mixture"},
        )
    with pytest.raises(ValueError, match="at least 1"):
        SpinnEncoder(
            5,
            4,
            tracker=TrackerSettings(3, predict_transitions=True),
            training_policy={"type": "beam_mixture", "width": 0},
        )


def five_token_beam_classifier(mix: str):
    """The ListOps beam classifier (float64, training mode) with a beam of `mix` wide enough
    for every tree of a 5-token line, and a batch of one such line."""
    overrides = listops_small_overrides(
        "spinn_beam",
        **{
            "model.encoder.training_policy.mix": mix,
            "model.encoder.training_policy.width": 14,
        },
    )
    params = Params.from_file(str(listops_config("spinn_beam")), as_json(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    every = list(reader.read(str(LISTOPS_SAMPLE)))
    instances = [i for i in every if len(i["tokens"]) == 5][:1]
    assert instances
    vocab = Vocabulary.from_instances(every)  # every label: a distribution to mix
    torch.manual_seed(3)
    model = Model.from_params(vocab=vocab, params=params.pop("model")).double().train()
    batch = Batch(instances)
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict()


def test_spinn_classifier_mixes_the_predictions_of_a_beam_that_mixes_predictions():
    """With `mix: "predictions"` the classifier's probabilities are sum_k w_k p(y | tree_k),
    each tree's root classified alone (float64, against the trees enumerated at a width
    holding every tree: the expectation of the prediction under the parser)."""
    model, tensors = five_token_beam_classifier("predictions")
    output = model(**tensors)
    encoder = model._encoder
    embedded = model._embedder(tensors["tokens"]).double()
    mask = torch.ones(1, 5, dtype=torch.bool)
    expected = torch.zeros(output["probs"].shape[1], dtype=torch.float64)
    for tree in all_trees(5):
        p = math.exp(tree_log_prob(encoder.spinn, embedded, mask, tree))
        root = encoder.spinn(embedded, mask, torch.tensor([tree]), policy=Given()).sentence
        expected = expected + p * torch.softmax(model._output_layer(model._mlp(root))[0], dim=-1)
    torch.testing.assert_close(output["probs"][0], expected, atol=1e-10, rtol=0)
    output["loss"].backward()
    classifier = encoder.spinn.tracker.transition_classifier
    assert float(classifier.weight.grad.abs().max()) > 0


def test_a_beam_trained_on_its_best_tree_takes_the_tree_that_explains_the_label_best():
    """`mix: "best_tree"` (hard EM over the beam), at a width holding every tree of a 5-token
    line (float64, trees enumerated): the reported probabilities are the mixture of
    `"predictions"`, the loss its -log p(y) plus -log p_parser(t*) for the tree t* under which
    the gold label is likeliest, and the parser gets a gradient."""
    model, tensors = five_token_beam_classifier("best_tree")
    output = model(**tensors)
    encoder = model._encoder
    embedded = model._embedder(tensors["tokens"]).double()
    mask = torch.ones(1, 5, dtype=torch.bool)
    gold = int(tensors["label"][0])
    mixture = torch.zeros(output["probs"].shape[1], dtype=torch.float64)
    candidates = []
    for tree in all_trees(5):
        log_p = tree_log_prob(encoder.spinn, embedded, mask, tree)
        root = encoder.spinn(embedded, mask, torch.tensor([tree]), policy=Given()).sentence
        probs = torch.softmax(model._output_layer(model._mlp(root))[0], dim=-1)
        mixture = mixture + math.exp(log_p) * probs
        candidates.append((probs[gold].item(), log_p))
    gold_prob, parser_log_p = max(candidates)
    assert sorted(p for p, _ in candidates)[-2] < gold_prob  # one best tree, no tie
    torch.testing.assert_close(output["probs"][0], mixture, atol=1e-10, rtol=0)
    expected = -math.log(float(mixture[gold])) - parser_log_p
    assert float(output["loss"]) == pytest.approx(expected, abs=1e-10)
    output["loss"].backward()
    classifier = encoder.spinn.tracker.transition_classifier
    assert float(classifier.weight.grad.abs().max()) > 0


def short_pair_beam_nli(mix: str):
    """The SNLI beam config (`spinn_beam_best_tree`, small sizes, float64, training mode, no
    dropout or batch normalisation: each tree's prediction must not depend on the batch it is
    computed in) with `mix`, at a width of 5, and a batch of one pair: a 3-token premise (2
    trees) and a 4-token hypothesis (5 trees), words of real SNLI sentences."""
    overrides = snli_small_overrides(
        "spinn_beam_best_tree",
        **{
            "model.encoder.training_policy.mix": mix,
            "model.dropout": 0.0,
            "model.batch_norm": False,
            "model.encoder.projection": {"dropout": 0.0, "batch_norm": False},
        },
    )
    params = Params.from_file(str(snli_config("spinn_beam_best_tree")), as_json(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(str(SNLI_SAMPLE)))
    instance = reader.text_to_instance(
        "boys play football", "boys scoring a touchdown", label="neutral"
    )
    reader.apply_token_indexers(instance)
    torch.manual_seed(4)
    model = Model.from_params(vocab=vocab, params=params.pop("model")).double().train()
    with torch.no_grad():  # a parser far from uniform, so that the trees weigh differently
        for parameter in model._encoder.spinn.tracker.parameters():
            parameter.normal_(0.0, 1.0)
    batch = Batch([instance])
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict()


def every_pair_of_trees(model, tensors):
    """(log-probability of the pair, label distribution) for every pair of a premise tree and
    a hypothesis tree, enumerated: each tree's root composed alone, the pair's features
    classified alone."""
    spinn = model._encoder.spinn
    sides = []
    for side in ("premise", "hypothesis"):
        embedded = model._embedder(tensors[side])
        num_words = embedded.size(1)
        mask = torch.ones(1, num_words, dtype=torch.bool)
        sides.append(
            [
                (
                    tree_log_prob(spinn, embedded, mask, tree),
                    spinn(embedded, mask, torch.tensor([tree]), policy=Given()).sentence,
                )
                for tree in all_trees(num_words)
            ]
        )
    assert [len(trees) for trees in sides] == [2, 5]
    pairs = []
    for log_p, p in sides[0]:
        for log_q, h in sides[1]:
            logits = model._output_layer(model._mlp(torch.cat([p, h, p - h, p * h], dim=-1)))
            pairs.append((log_p + log_q, torch.softmax(logits[0], dim=-1)))
    return pairs


def test_spinn_nli_mixes_the_predictions_of_every_pair_of_the_two_beams_trees():
    """With `mix: "predictions"` the NLI model's probabilities are
    sum_ij w_i v_j p(y | premise tree i, hypothesis tree j): the expectation of the pair's
    prediction under the parser, against every pair enumerated (float64; the premise's beam
    has 3 empty slots, which weigh nothing), and the parser gets a gradient."""
    model, tensors = short_pair_beam_nli("predictions")
    output = model(**tensors)
    expected = sum(math.exp(log_w) * probs for log_w, probs in every_pair_of_trees(model, tensors))
    torch.testing.assert_close(output["probs"][0], expected, atol=1e-10, rtol=0)
    output["loss"].backward()
    classifier = model._encoder.spinn.tracker.transition_classifier
    assert float(classifier.weight.grad.abs().max()) > 0


def test_spinn_nli_trains_the_parser_on_the_pair_of_trees_that_explains_the_label_best():
    """`mix: "best_tree"` on pairs: the loss is the mixture's -log p(y) plus
    -log p_parser(premise tree) - log p_parser(hypothesis tree) for the pair under which the
    gold label is likeliest (float64, every pair enumerated)."""
    model, tensors = short_pair_beam_nli("best_tree")
    output = model(**tensors)
    gold = int(tensors["label"][0])
    pairs = every_pair_of_trees(model, tensors)
    mixture = sum(math.exp(log_w) * probs for log_w, probs in pairs)
    torch.testing.assert_close(output["probs"][0], mixture, atol=1e-10, rtol=0)
    candidates = sorted((float(probs[gold]), log_w) for log_w, probs in pairs)
    assert candidates[-2][0] < candidates[-1][0]  # one best pair, no tie
    expected = -math.log(float(mixture[gold])) - candidates[-1][1]
    assert float(output["loss"]) == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("mix", ["predictions", "best_tree"])
def test_a_model_that_reads_one_sentence_vector_refuses_a_beam_that_mixes_predictions(mix):
    """tree_relatedness would read the roots' mixture and train as mix "roots" without a word:
    a ConfigurationError naming the setting instead; mix "roots" builds."""

    def model_params(mix: str) -> Params:
        return Params(
            {
                "type": "tree_relatedness",
                "text_field_embedder": {
                    "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 5}}
                },
                "encoder": {
                    "type": "spinn",
                    "input_dim": 5,
                    "hidden_dim": 4,
                    "tracker": {"tracking_dim": 3, "predict_transitions": True},
                    "training_policy": {"type": "beam_mixture", "width": 2, "mix": mix},
                },
            }
        )

    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(["a", "b"])
    with pytest.raises(ConfigurationError, match=f"tree_relatedness.*mix '{mix}'.*\"roots\""):
        Model.from_params(vocab=vocab, params=model_params(mix))
    assert Model.from_params(vocab=vocab, params=model_params("roots")) is not None
