"""Every shipped config parses, and the paths the project is known by stay equal to the
task-folder configs."""

import pytest
from allennlp.common import Params

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
