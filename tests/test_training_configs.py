"""Every shipped config parses, and the paths the project is known by stay equal to the
task-folder configs."""

import copy
import inspect
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest
import torch
from allennlp.common import Params
from allennlp.common.plugins import import_plugins
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder
from allennlp.nn import InitializerApplicator

from spinn_allennlp.data.tree_sources import BeneparTrees, resolve_benepar_model
from spinn_allennlp.modules import TreeNodeEncoder
from spinn_allennlp.testing import CONFIGS_ROOT

VARIANTS = ["lstm", "spinn_pi_nt", "spinn_pi", "spinn"]


@pytest.fixture(autouse=True)
def archive_variables(monkeypatch):
    # Configs that start from a trained archive name it in the environment (jsonnet's
    # std.extVar): a placeholder lets them parse.
    monkeypatch.setenv("MODEL1_ARCHIVE", "model1/model.tar.gz")


@pytest.mark.parametrize("variant", VARIANTS)
def test_top_level_paths_are_the_pair_classification_configs(variant):
    legacy = Params.from_file(str(CONFIGS_ROOT / f"{variant}.jsonnet")).as_dict()
    task = Params.from_file(str(CONFIGS_ROOT / "pair_classification" / f"{variant}.jsonnet"))
    assert legacy == task.as_dict()
    assert legacy["model"]["type"] == "spinn_nli"


@pytest.mark.parametrize("path", sorted(CONFIGS_ROOT.rglob("*.jsonnet")), ids=str)
def test_every_config_parses(path):
    params = Params.from_file(str(path)).as_dict()
    assert {"dataset_reader", "model", "trainer", "train_data_path"} <= set(params)


@pytest.mark.parametrize("path", sorted(CONFIGS_ROOT.rglob("*.jsonnet")), ids=str)
def test_no_config_pins_the_device(path):
    """The device is chosen where users can set it (AllenNLP's GPU-if-present default, or an
    override), not hard-coded in a shipped config."""
    params = Params.from_file(str(path)).as_dict()
    assert "cuda_device" not in params["trainer"]


@pytest.mark.parametrize(
    "variant, benepar",
    [("spinn_pi_nt", True), ("spinn_pi", True), ("lstm", False), ("spinn", False)],
)
def test_raw_text_trees_of_the_snli_configs(variant, benepar):
    """The models without a parser get our benepar model's trees for raw text (the committed
    file); the full SPINN parses raw text itself."""
    params = Params.from_file(str(CONFIGS_ROOT / "pair_classification" / f"{variant}.jsonnet"))
    reader = DatasetReader.from_params(params["dataset_reader"])
    if benepar:
        assert isinstance(reader.tree_source, BeneparTrees)
        assert Path(resolve_benepar_model(reader.tree_source.model)).is_file()
    else:
        assert reader.tree_source is None


def _spinn_encoders(config: Any) -> Iterator[Tuple[str, type, Dict[str, Any]]]:
    """(the model's argument, the registry it is built from, the block) of every `"type":
    "spinn"` encoder a model of the config takes (`model.encoder`, or another constructor
    argument of the model's class annotated with an encoder base class)."""
    model = config.get("model", {})
    if not isinstance(model, dict) or "type" not in model:
        return
    annotations = inspect.signature(Model.by_name(model["type"]).__init__).parameters
    for name, value in model.items():
        if isinstance(value, dict) and value.get("type") == "spinn" and name in annotations:
            base = annotations[name].annotation
            if base in (Seq2VecEncoder, TreeNodeEncoder):
                yield name, base, value


RUN_CONFIGS = sorted((CONFIGS_ROOT.parent / "results").rglob("config.json"))


@pytest.fixture(scope="module")
def plugins():
    # The allennlp-models configs name its models (bimpm, ...): registered by its plugin.
    import_plugins()


@pytest.mark.parametrize("path", sorted(CONFIGS_ROOT.rglob("*.jsonnet")) + RUN_CONFIGS, ids=str)
def test_every_spinn_encoder_of_a_committed_config_builds(path, plugins):
    """Every shipped config, and every run's config under results/ (written by the releases and
    sessions before the encoder's settings became blocks, in the old flat keys), builds its
    `spinn` encoders: the old keys are translated, none is refused."""
    config = Params.from_file(str(path)).as_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for _, base, block in _spinn_encoders(config):
            encoder = base.from_params(Params(copy.deepcopy(block)), vocab=Vocabulary())
            assert encoder.get_output_dim() > 0


@pytest.mark.parametrize("path", sorted(CONFIGS_ROOT.rglob("*.jsonnet")), ids=str)
def test_every_initializer_applies_to_its_spinn_encoders(path, plugins):
    """A config's `model.initializer` runs on its `spinn` encoders as the model would call it (the
    parameters named under the model's attribute `_<argument>`). The SNLI configs' He
    initialisation of every `_encoder.*weight.*` once reached the GRC's layer norm, whose weight
    is a vector, and every SNLI run with `composition: "grc"` stopped on torch's fan-in error."""
    config = Params.from_file(str(path)).as_dict()
    initializer_block = config.get("model", {}).get("initializer")
    encoders = list(_spinn_encoders(config))
    if initializer_block is None or not encoders:
        return
    initializer = InitializerApplicator.from_params(Params(copy.deepcopy(initializer_block)))
    model = torch.nn.Module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for argument, base, block in encoders:
            encoder = base.from_params(Params(copy.deepcopy(block)), vocab=Vocabulary())
            model.add_module(f"_{argument}", encoder)
    initializer(model)
    for name, parameter in model.named_parameters():
        if name.endswith("norm.weight"):
            assert bool((parameter == 1).all()), name
