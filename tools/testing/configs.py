"""Small-model overrides for the shipped configs, so tests run them as shipped but fast
(torch-free: plain data)."""

import json
from pathlib import Path
from typing import Any, Dict

from spinn_core.testing.paths import CONFIGS_ROOT, FIXTURES_ROOT

SNLI_SAMPLE = FIXTURES_ROOT / "pair_classification" / "snli" / "snli_sample.jsonl"

# The SNLI configs (training_config/pair_classification/*.jsonnet) with small sizes and the
# sample data; everything else as shipped.
SNLI_SMALL: Dict[str, Any] = {
    "train_data_path": str(SNLI_SAMPLE),
    "validation_data_path": str(SNLI_SAMPLE),
    # Not read at all (allennlp train indexes every dataset the config names, test included).
    "test_data_path": None,
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "model.mlp_dim": 16,
    "trainer.num_epochs": 1,
    # AllenNLP's bucket sampler draws random noise each pass: the save/load check needs the
    # same first batch twice, so tests use a plain sequential loader.
    "data_loader": {"batch_sampler": None, "batch_size": 8},
}
# Encoders with a tracker (SPINN-PI and every config built on the full SPINN) share one size.
_TRACKER_SIZES: Dict[str, Any] = {
    "model.encoder.input_dim": 12,
    "model.encoder.hidden_dim": 10,
    "model.encoder.tracker.tracking_dim": 6,
}
# A parser block of its own (sizes of its own) beside SPINN-PI-NT's.
_OWN_PARSER_SIZES: Dict[str, Any] = {
    "model.encoder.input_dim": 12,
    "model.encoder.hidden_dim": 10,
    "model.encoder.parser.embedding_dim": 5,
    "model.encoder.parser.hidden_dim": 6,
    "model.encoder.parser.tracking_dim": 4,
}
SNLI_ENCODER_SIZES: Dict[str, Dict[str, Any]] = {
    "lstm": {"model.encoder.input_size": 12, "model.encoder.hidden_size": 10},
    "spinn_pi_nt": {"model.encoder.input_dim": 12, "model.encoder.hidden_dim": 10},
    "spinn_pi": _TRACKER_SIZES,
    "spinn": _TRACKER_SIZES,
    "spinn_reinforce": _TRACKER_SIZES,
    "spinn_ppo": _TRACKER_SIZES,
    "spinn_best_draw": _TRACKER_SIZES,
    "spinn_beam_best_tree": _TRACKER_SIZES,
    "spinn_typed": {**_TRACKER_SIZES, "model.encoder.tracker.type_dim": 3},
    "own_parser_best_draw": _OWN_PARSER_SIZES,
    "own_parser_ppo": _OWN_PARSER_SIZES,
}


def snli_small_overrides(variant: str, **extra: Any) -> Dict[str, Any]:
    """Overrides for `training_config/pair_classification/<variant>.jsonnet`."""
    return {**SNLI_SMALL, **SNLI_ENCODER_SIZES[variant], **extra}


# The Chen et al. (2017) models (esim, tree_esim, him) at small sizes: embeddings 12, states 10
# (ESIM: 5 per direction), F to 8, MLP 6.
_ESIM_SIZES: Dict[str, Any] = {
    "text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "encoder.input_size": 12,
    "encoder.hidden_size": 5,
    "projection_feedforward.input_dim": 40,
    "projection_feedforward.hidden_dims": 8,
    "inference_encoder.input_size": 8,
    "inference_encoder.hidden_size": 5,
    "output_feedforward.input_dim": 40,
    "output_feedforward.hidden_dims": 6,
}
_TREE_SIZES: Dict[str, Any] = {
    "text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "encoder.input_dim": 12,
    "encoder.hidden_dim": 10,
    "projection_feedforward.input_dim": 40,
    "projection_feedforward.hidden_dims": 8,
    "inference_encoder.input_dim": 8,
    "inference_encoder.hidden_dim": 10,
    "output_feedforward.input_dim": 60,
    "output_feedforward.hidden_dims": 6,
}
ATTENTION_MODEL_SIZES: Dict[str, Dict[str, Any]] = {
    "esim": {f"model.{key}": value for key, value in _ESIM_SIZES.items()},
    "tree_esim": {f"model.{key}": value for key, value in _TREE_SIZES.items()},
    "him": {
        **{f"model.members.esim.{key}": value for key, value in _ESIM_SIZES.items()},
        **{f"model.members.tree.{key}": value for key, value in _TREE_SIZES.items()},
    },
}


def attention_small_overrides(variant: str, **extra: Any) -> Dict[str, Any]:
    """Overrides for `training_config/pair_classification/<variant>.jsonnet`, variant one of
    esim, tree_esim, him."""
    data = {key: value for key, value in SNLI_SMALL.items() if not key.startswith("model.")}
    return {**data, **ATTENTION_MODEL_SIZES[variant], **extra}


def as_json(overrides: Dict[str, Any]) -> str:
    return json.dumps(overrides)


def snli_config(variant: str) -> Path:
    """The shipped config of an SNLI variant: lstm, spinn_pi_nt, spinn_pi, spinn, esim,
    tree_esim or him."""
    return CONFIGS_ROOT / "pair_classification" / f"{variant}.jsonnet"


SST_SAMPLE = FIXTURES_ROOT / "classification" / "sst" / "sst_sample.txt"
SICK_SAMPLE = FIXTURES_ROOT / "relatedness" / "sick" / "sick_sample.txt"

# Small sizes for the SST configs (training_config/classification/sst_*.jsonnet): the sample
# for every split, tiny layers, one epoch, a sequential loader (see SNLI_SMALL).
SST_SMALL: Dict[str, Any] = {
    "train_data_path": str(SST_SAMPLE),
    "validation_data_path": str(SST_SAMPLE),
    "test_data_path": str(SST_SAMPLE),
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "trainer.num_epochs": 1,
    "data_loader": {"batch_sampler": None, "batch_size": 8},
    "validation_data_loader": {"batch_sampler": None, "batch_size": 8},
}
TREE_ENCODER_SIZES: Dict[str, Dict[str, Any]] = {
    "spinn_pi_nt": {"model.encoder.input_dim": 12, "model.encoder.hidden_dim": 10},
    "spinn_pi": {
        "model.encoder.input_dim": 12,
        "model.encoder.hidden_dim": 10,
        "model.encoder.tracker.tracking_dim": 6,
    },
    "spinn": {
        "model.encoder.input_dim": 12,
        "model.encoder.hidden_dim": 10,
        "model.encoder.tracker.tracking_dim": 6,
    },
    "child_sum": {"model.encoder.input_dim": 12, "model.encoder.hidden_dim": 10},
    "lstm": {"model.encoder.input_size": 12, "model.encoder.hidden_size": 10},
    "bilstm": {"model.encoder.input_size": 12, "model.encoder.hidden_size": 5},
}


def sst_small_overrides(encoder: str, **extra: Any) -> Dict[str, Any]:
    """Overrides for `training_config/classification/sst_<setting>_<encoder>.jsonnet`."""
    return {**SST_SMALL, **TREE_ENCODER_SIZES[encoder], **extra}


def sst_config(setting: str, encoder: str) -> Path:
    """The shipped SST config: setting "fine" or "binary"; encoder spinn_pi_nt, spinn_pi,
    spinn, child_sum, lstm or bilstm."""
    return CONFIGS_ROOT / "classification" / f"sst_{setting}_{encoder}.jsonnet"


SICK_SMALL: Dict[str, Any] = {
    "train_data_path": f"{SICK_SAMPLE}#TRAIN",
    "validation_data_path": f"{SICK_SAMPLE}#TRIAL",
    "test_data_path": f"{SICK_SAMPLE}#TEST",
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "trainer.num_epochs": 1,
    "data_loader": {"batch_sampler": None, "batch_size": 4},
    "validation_data_loader": {"batch_sampler": None, "batch_size": 4},
}


def sick_small_overrides(encoder: str, **extra: Any) -> Dict[str, Any]:
    """Overrides for `training_config/relatedness/sick_<encoder>.jsonnet`."""
    return {**SICK_SMALL, **TREE_ENCODER_SIZES[encoder], "model.hidden_dim": 7, **extra}


def sick_config(encoder: str) -> Path:
    """The shipped SICK relatedness config: encoder spinn_pi_nt, child_sum or lstm."""
    return CONFIGS_ROOT / "relatedness" / f"sick_{encoder}.jsonnet"


def sick_entailment_config() -> Path:
    """SICK entailment through the NLI model (SPINN-PI-NT)."""
    return CONFIGS_ROOT / "pair_classification" / "sick_entailment_spinn_pi_nt.jsonnet"


LISTOPS_SAMPLE = FIXTURES_ROOT / "classification" / "listops" / "sample.tsv"
# The ListOps configs (training_config/classification/*.jsonnet) with small sizes and the
# sample data; everything else as shipped.
LISTOPS_VARIANTS = [
    "lstm",
    "spinn_pi_nt",
    "spinn_pi_nt_balanced",
    "spinn",
    "spinn_model2",
    "spinn_model3",
    "spinn_model4",
    "spinn_summaries",
    "spinn_reinforce",
    "spinn_soft_annealed",
    "spinn_gumbel",
    "spinn_ppo",
    "spinn_reinforce_warmup",
    "spinn_best_draw",
    "spinn_beam",
    "own_parser_best_draw",
    "own_parser_beam",
    "own_parser_ppo",
]
LISTOPS_SMALL: Dict[str, Any] = {
    "train_data_path": str(LISTOPS_SAMPLE),
    "validation_data_path": str(LISTOPS_SAMPLE),
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.mlp_dim": 8,
    "trainer.num_epochs": 1,
    "data_loader": {"batch_sampler": None, "batch_size": 8},
}


def listops_small_overrides(variant: str, **extra: Any) -> Dict[str, Any]:
    """Overrides for `training_config/classification/listops_<variant>.jsonnet`."""
    if variant == "lstm":
        sizes = {"model.encoder.input_size": 8, "model.encoder.hidden_size": 6}
    else:
        sizes = {"model.encoder.input_dim": 8, "model.encoder.hidden_dim": 6}
        if variant.startswith("own_parser"):
            sizes.update(
                {
                    "model.encoder.parser.embedding_dim": 5,
                    "model.encoder.parser.hidden_dim": 6,
                    "model.encoder.parser.tracking_dim": 4,
                }
            )
        elif variant not in ("spinn_pi_nt", "spinn_pi_nt_balanced"):
            sizes["model.encoder.tracker.tracking_dim"] = 4
        if variant == "spinn_summaries":
            sizes["model.encoder.tracker.summary_dim"] = 3
    return {**LISTOPS_SMALL, **sizes, **extra}


def listops_config(variant: str) -> Path:
    """The shipped config of a ListOps variant (see `LISTOPS_VARIANTS`)."""
    return CONFIGS_ROOT / "classification" / f"listops_{variant}.jsonnet"
