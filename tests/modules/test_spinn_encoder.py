import json
import os
import subprocess
import sys

import pytest
import torch
from allennlp.common import Params
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.core.spinn import GIVEN, MIXED, PREDICTED
from spinn_allennlp.modules import SpinnEncoder

from tests.conftest import FIXTURES, ROOT


def test_from_params_with_allennlp_names():
    encoder = Seq2VecEncoder.from_params(Params({"type": "spinn", "input_dim": 30,
                                                 "hidden_dim": 20}))
    assert isinstance(encoder, SpinnEncoder)
    assert encoder.get_input_dim() == 30 and encoder.get_output_dim() == 20
    assert encoder.spinn.tracker is None  # SPINN-PI-NT by default
    inputs = torch.randn(3, 4, 30)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    assert encoder(inputs, mask).shape == (3, 20)


def test_transition_mode_policy():
    plain = SpinnEncoder(4, 3, tracking_dim=2)
    parser = SpinnEncoder(4, 3, tracking_dim=2, predict_transitions=True)
    scheduled = SpinnEncoder(4, 3, tracking_dim=2, predict_transitions=True,
                             self_transition_prob=0.3)
    gold_at_test = SpinnEncoder(4, 3, tracking_dim=2, predict_transitions=True,
                                parse_at_test_time=False)
    assert plain.transition_mode(False) == GIVEN  # the balanced default tree
    assert parser.transition_mode(False) == PREDICTED
    assert parser.train().transition_mode(True) == GIVEN
    assert parser.eval().transition_mode(True) == PREDICTED
    assert scheduled.train().transition_mode(True) == MIXED
    assert gold_at_test.eval().transition_mode(True) == GIVEN


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="tracking"):
        SpinnEncoder(4, 3, predict_transitions=True)
    with pytest.raises(ValueError, match="composition"):
        SpinnEncoder(4, 3, composition="gru")
    with pytest.raises(ValueError, match="self_transition_prob"):
        SpinnEncoder(4, 3, tracking_dim=2, self_transition_prob=0.5)


def allennlp(*args, cwd):
    env = dict(os.environ, FIXTURES=str(FIXTURES))
    result = subprocess.run([sys.executable, "-m", "allennlp", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_cli_test_install_finds_the_plugin(tmp_path):
    # Run from outside the repo so only --include-package can find the plugin.
    result = allennlp("test-install", "--include-package", "spinn_allennlp", cwd=tmp_path)
    # It exits non-zero (see allennlp()) when --include-package can't import the plugin.
    assert "AllenNLP version 2.10.1 installed" in result.stdout + result.stderr


def test_cli_trains_basic_classifier_with_spinn_encoder(tmp_path):
    """AllenNLP's own text classifier, no transitions anywhere: the plugin is found through
    .allennlp_plugins in the repo root (no --include-package)."""
    out = tmp_path / "out"
    allennlp("train", str(FIXTURES / "configs" / "basic_classifier_spinn.jsonnet"),
             "-s", str(out), cwd=ROOT)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epoch"] == 0  # one epoch, counted from 0
    assert 0.0 <= metrics["training_accuracy"] <= 1.0
    assert metrics["training_loss"] > 0
    assert (out / "model.tar.gz").exists()
