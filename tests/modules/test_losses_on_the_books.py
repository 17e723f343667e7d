"""What the `spinn` encoder adds to the loss (a soft stack's strength entropy; its own weighted
transition loss) is on the model's books: our models (every `SentenceEncoderModel`) add it to
the loss they return, which the trainer reports, and to their metrics (`encoder_NAME`), with
the same gradient as before. A model that knows nothing of it (AllenNLP's `basic_classifier`)
still trains it, through the sentence vectors' backward pass."""

import copy

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.models import Model

import spinn_allennlp.plugin  # noqa: F401  (registers the models)

ENCODER = {
    "type": "spinn",
    "input_dim": 6,
    "hidden_dim": 5,
    "tracker": {"tracking_dim": 4, "predict_transitions": True},
    "training_policy": {"type": "soft"},
}
EMBEDDER = {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}}


def vocab() -> Vocabulary:
    return Vocabulary(
        {"tokens": {word: 1 for word in "a b c d e".split()}, "labels": {"pos": 1, "neg": 1}},
        non_padded_namespaces=["labels"],
    )


def model(kind: str, weight: float) -> Model:
    torch.manual_seed(0)
    encoder_key = "encoder" if kind == "spinn_classifier" else "seq2vec_encoder"
    config = {
        "type": kind,
        "text_field_embedder": EMBEDDER,
        encoder_key: {**ENCODER, "strength_entropy_weight": weight},
    }
    return Model.from_params(vocab=vocab(), params=Params(copy.deepcopy(config))).double()


def step(model: Model):
    tokens = torch.tensor([[2, 3, 4, 5], [3, 4, 2, 0], [5, 6, 0, 0]])
    model.train()
    model.zero_grad()
    torch.manual_seed(1)
    output = model({"tokens": {"tokens": tokens}}, label=torch.tensor([0, 1, 0]))
    output["loss"].backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return float(output["loss"]), grads, model.get_metrics(reset=True)


@pytest.mark.parametrize("kind", ["spinn_classifier", "basic_classifier"])
def test_the_encoder_s_term_trains_the_parser_in_every_model(kind):
    """The same gradient whether the model books the term or the encoder attaches it: the
    term's gradient reaches the parser in both."""
    _, without, _ = step(model(kind, 0.0))
    _, with_term, _ = step(model(kind, 0.5))
    parser = "_encoder.spinn.tracker.transition_classifier.weight"
    if kind == "basic_classifier":
        parser = "_seq2vec_encoder.spinn.tracker.transition_classifier.weight"
    assert not torch.allclose(without[parser], with_term[parser])


def test_our_models_report_the_term_in_their_loss_and_metrics():
    loss_without, grads_without, metrics_without = step(model("spinn_classifier", 0.0))
    loss_with, grads_with, metrics = step(model("spinn_classifier", 0.5))
    term = metrics["encoder_strength_entropy"]
    assert term > 0 and "encoder_strength_entropy" not in metrics_without
    assert loss_with == pytest.approx(loss_without + term, abs=1e-12)


def test_a_model_that_does_not_book_it_keeps_its_own_loss():
    """`basic_classifier`'s loss is its cross-entropy alone (the term's gradient still comes
    through the sentence vectors: the test above)."""
    loss_without, _, _ = step(model("basic_classifier", 0.0))
    loss_with, _, _ = step(model("basic_classifier", 0.5))
    assert loss_with == pytest.approx(loss_without, abs=1e-12)


def test_the_gradient_is_the_same_booked_or_attached():
    """Booking changes what the loss says, not what it trains: the model's gradients equal
    those of the same model whose encoder attaches the term (as before issue 81)."""
    booked = model("spinn_classifier", 0.5)
    attached = model("spinn_classifier", 0.5)
    attached._encoder.added_losses.booked = False
    loss_booked, grads_booked, _ = step(booked)
    loss_attached, grads_attached, metrics = step(attached)
    assert loss_booked == pytest.approx(loss_attached + metrics["encoder_strength_entropy"])
    assert grads_booked.keys() == grads_attached.keys()
    for name in grads_booked:
        torch.testing.assert_close(grads_booked[name], grads_attached[name], rtol=0, atol=1e-12)
