"""Every shipped config parses, and the paths the project is known by stay equal to the
task-folder configs."""

from pathlib import Path

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader

from spinn_allennlp.data.tree_sources import BeneparTrees, resolve_benepar_model
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
