"""Frozen pretrained word vectors through AllenNLP's own embedding (as the paper's GloVe)."""

import gzip

import torch
from allennlp.commands.train import train_model_from_file

from spinn_allennlp.testing import FIXTURES_ROOT
from tools.testing.configs import as_json, snli_config, snli_small_overrides

# A 100-word sample of GloVe 6B 300d (from allenai/allennlp-models' test fixtures, Apache-2.0).
GLOVE = FIXTURES_ROOT / "glove" / "glove.6B.300d.sample.txt.gz"


def test_frozen_glove_vectors_are_loaded_and_stay_fixed(tmp_path):
    overrides = snli_small_overrides(
        "spinn_pi_nt",
        **{
            "model.text_field_embedder.token_embedders.tokens.embedding_dim": 300,
            "model.text_field_embedder.token_embedders.tokens.pretrained_file": str(GLOVE),
            "model.text_field_embedder.token_embedders.tokens.trainable": False,
            "model.encoder.input_dim": 300,
        },
    )
    model = train_model_from_file(
        snli_config("spinn_pi_nt"), tmp_path, overrides=as_json(overrides), return_model=True
    )
    weight = model._embedder.token_embedder_tokens.weight
    assert not weight.requires_grad
    with gzip.open(GLOVE, "rt", encoding="utf-8") as glove:
        vectors = {line.split(" ", 1)[0]: line for line in glove}
    vocab = model.vocab.get_token_to_index_vocabulary("tokens")
    shared = [word for word in vocab if word in vectors]
    assert len(shared) >= 10  # the fixture's words include common ones ("a", "the", "man", ...)
    for word in shared:
        expected = torch.tensor([float(x) for x in vectors[word].split()[1:]])
        torch.testing.assert_close(weight[vocab[word]], expected)
