"""Small-model overrides for the shipped configs, so tests run them as shipped but fast
(torch-free: plain data)."""

import json
from pathlib import Path
from typing import Any, Dict

from spinn_allennlp.testing.paths import CONFIGS_ROOT, FIXTURES_ROOT

SNLI_SAMPLE = FIXTURES_ROOT / "pair_classification" / "snli" / "snli_sample.jsonl"

# The SNLI configs (training_config/pair_classification/*.jsonnet) with small sizes and the
# sample data; everything else as shipped.
SNLI_SMALL: Dict[str, Any] = {
    "train_data_path": str(SNLI_SAMPLE),
    "validation_data_path": str(SNLI_SAMPLE),
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "model.mlp_dim": 16,
    "trainer.num_epochs": 1,
    # AllenNLP's bucket sampler draws random noise each pass: the save/load check needs the
    # same first batch twice, so tests use a plain sequential loader.
    "data_loader": {"batch_sampler": None, "batch_size": 8},
}
SNLI_ENCODER_SIZES: Dict[str, Dict[str, Any]] = {
    "lstm": {"model.encoder.input_size": 12, "model.encoder.hidden_size": 10},
    "spinn_pi_nt": {"model.encoder.input_dim": 12, "model.encoder.hidden_dim": 10},
    "spinn_pi": {
        "model.encoder.input_dim": 12,
        "model.encoder.hidden_dim": 10,
        "model.encoder.tracking_dim": 6,
    },
    "spinn": {
        "model.encoder.input_dim": 12,
        "model.encoder.hidden_dim": 10,
        "model.encoder.tracking_dim": 6,
    },
}


def snli_small_overrides(variant: str, **extra: Any) -> Dict[str, Any]:
    """Overrides for `training_config/pair_classification/<variant>.jsonnet`."""
    return {**SNLI_SMALL, **SNLI_ENCODER_SIZES[variant], **extra}


def as_json(overrides: Dict[str, Any]) -> str:
    return json.dumps(overrides)


def snli_config(variant: str) -> Path:
    """The shipped config of an SNLI variant: lstm, spinn_pi_nt, spinn_pi or spinn."""
    return CONFIGS_ROOT / "pair_classification" / f"{variant}.jsonnet"
