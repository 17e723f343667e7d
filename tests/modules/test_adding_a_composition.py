"""Adding a composition is its file, its test and the docs (docs/design.md, "Adding a
composition"): a cell written here, in a test, registered by name and touching no package file,
is chosen by name, built from an encoder config, and runs through every runner — the thin stack
on both of its paths, level by level, the soft stack, the beam runners, a CUDA graph's bucketed
pass — each computing on given trees what the cell applied recursively computes (float64). The
fused GPU kernels, which compose with the TreeLSTM only, refuse it by its class's name. The
encoder's `composition` setting reads the same registry: a name or `{"type": name, ...}`.

The cell is registered for each test and removed after it (a name registered at import would
change what other modules parametrize over, which pytest-xdist's workers must agree on)."""

import random
from typing import Optional

import pytest
import torch
from allennlp.common import Params
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder
from torch import nn

import spinn_allennlp.plugin  # noqa: F401  (registers the encoder)
from spinn_core.compositions import (
    Composition,
    GRCComposition,
    register_composition,
    registered_compositions,
)
from spinn_core.compositions import registry as composition_registry
from spinn_core.fused import fused_refusal
from spinn_core.graphs import GraphedPasses
from spinn_core.policies import BeamMixture, BeamSearch, Given, SoftStrengths
from spinn_core.runners import run_beam, run_levelwise, run_soft_stack, run_thin_stack
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
from spinn_core.transitions import transitions_to_tree

D = 4


class MeanComposition(Composition):
    """A test's cell: parent = scale * tanh(W [(left + right) / 2; extra] + b)."""

    def __init__(self, hidden_dim: int, extra_dim: int = 0, scale: float = 1.0) -> None:
        super().__init__()
        self.hidden_dim, self.extra_dim, self.node_dim = hidden_dim, extra_dim, hidden_dim
        self.linear = nn.Linear(hidden_dim + extra_dim, hidden_dim)
        self.scale = scale

    def forward(
        self, left: torch.Tensor, right: torch.Tensor, extra: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        features = [(left + right) / 2] + ([extra] if extra is not None else [])
        return self.scale * torch.tanh(self.linear(torch.cat(features, dim=-1)))

    def leaf(self, extra: torch.Tensor) -> torch.Tensor:
        zeros = extra.new_zeros(extra.shape[:-1] + (self.hidden_dim,))
        return self(zeros, zeros, extra)

    @staticmethod
    def hidden(nodes: torch.Tensor) -> torch.Tensor:
        return nodes


@pytest.fixture
def mean_cell(monkeypatch):
    registry = composition_registry.COMPOSITIONS
    monkeypatch.setattr(registry, "classes", dict(registry.classes))
    register_composition("test_mean")(MeanComposition)
    assert "test_mean" in registered_compositions()
    return {"type": "test_mean", "scale": 0.5}


def recursive(model: Spinn, words: torch.Tensor, transitions) -> torch.Tensor:
    """The cell applied node by node over the given tree: what every runner must compute."""
    tree = transitions_to_tree(list(range(words.size(0))), transitions)
    leaves = model.leaves(words.unsqueeze(0), torch.ones(1, words.size(0), dtype=torch.bool))

    def node(subtree):
        if isinstance(subtree, int):
            return leaves[subtree]
        left, right = (node(child) for child in subtree)
        return model.compose(left, right)

    return node(tree)


def test_it_is_chosen_by_name_with_its_arguments(mean_cell):
    model = Spinn(5, D, composition=mean_cell)
    assert isinstance(model.compose, MeanComposition) and model.compose.scale == 0.5
    with pytest.raises(ValueError, match="test_mean.*unexpected keyword argument 'depth'"):
        Spinn(5, D, composition={"type": "test_mean", "depth": 2})
    with pytest.raises(ValueError, match="must be one of .*'treelstm'.*register_composition"):
        Spinn(5, D, composition="unknown")


def test_every_runner_composes_with_it(mean_cell):
    torch.manual_seed(0)
    lengths = [5, 1, 3, 7]
    inputs, mask, transitions = make_batch(lengths, 5, random.Random(1), dtype=torch.float64)
    pi_nt = Spinn(5, D, composition=mean_cell).double().eval()
    expected = torch.stack(
        [
            recursive(pi_nt, inputs[i, :n], [t for t in transitions[i].tolist() if t >= 0])
            for i, n in enumerate(lengths)
        ]
    )
    runs = {
        "level-wise": pi_nt(inputs, mask, transitions, runner=run_levelwise),
        "thin stack (sparse)": pi_nt(inputs, mask, transitions, runner=run_thin_stack),
        "graph's bucket": GraphedPasses(pi_nt, batch_size=8, capture=False)(
            inputs, mask, transitions, Given()
        ),
    }
    pi_nt.static_shapes = True
    runs["thin stack (static shapes)"] = pi_nt(inputs, mask, transitions, runner=run_thin_stack)
    # The soft stack's strengths come from a parser: one whose tracker stays out of the
    # composition, with PI-NT's cell and leaves, driven by the given trees' one-hot strengths.
    soft = Spinn(5, D, tracking_dim=3, predict_transitions=True, composition=mean_cell,
                 composition_reads_tracker=False).double()  # fmt: skip
    soft.compose.load_state_dict(pi_nt.compose.state_dict())
    soft.projection.load_state_dict(pi_nt.projection.state_dict())
    runs["soft stack"] = soft(
        inputs, mask, transitions, policy=SoftStrengths(), runner=run_soft_stack
    )
    for name, output in runs.items():
        assert output is not None, name
        torch.testing.assert_close(output.sentence, expected, rtol=1e-12, atol=1e-12, msg=name)
    # The parser's runners: a beam search, and a beam mixture with its gradient.
    torch.manual_seed(0)
    parser = Spinn(5, D, tracking_dim=3, predict_transitions=True, composition=mean_cell).double()
    searched = parser(inputs, mask, policy=BeamSearch(2), runner=run_beam)
    # Its sentence vectors are the cell's over the trees it found.
    found = parser(inputs, mask, searched.transitions, policy=Given(), runner=run_thin_stack)
    torch.testing.assert_close(searched.sentence, found.sentence, rtol=1e-12, atol=1e-12)
    mixed = parser(inputs, mask, policy=BeamMixture(2))
    mixed.sentence.sum().backward()
    assert parser.compose.linear.weight.grad is not None
    assert torch.isfinite(parser.compose.linear.weight.grad).all()
    # The fused kernels say why not (here in Triton's interpreter, as tests/conftest.py sets).
    reason = fused_refusal(parser.parts(), Given(), torch.device("cpu"), torch.float64)
    assert reason is not None and "MeanComposition" in reason


def encoder(composition):
    return Seq2VecEncoder.from_params(
        Params({"type": "spinn", "input_dim": 5, "hidden_dim": D, "composition": composition})
    )


def test_a_cell_of_a_test_is_built_from_an_encoder_config(mean_cell):  # noqa: F811
    built = encoder(mean_cell)
    assert isinstance(built.spinn.compose, MeanComposition) and built.spinn.compose.scale == 0.5
    inputs, mask, _ = make_batch([3, 1, 4], 5, random.Random(0))
    output = built(inputs, mask)
    assert output.shape == (3, D) and torch.isfinite(output).all()


@pytest.mark.parametrize("name", registered_compositions())
def test_a_name_and_its_object_form_build_the_same_encoder(name):
    torch.manual_seed(0)
    by_name = encoder(name)
    torch.manual_seed(0)
    by_object = encoder({"type": name})
    assert type(by_name.spinn.compose) is type(by_object.spinn.compose)
    for a, b in zip(by_name.parameters(), by_object.parameters()):
        assert torch.equal(a, b)
    assert isinstance(encoder({"type": "grc"}).spinn.compose, GRCComposition)


def test_an_unknown_name_is_refused_with_the_registered_ones():
    with pytest.raises(ValueError, match=r"composition must be one of \['grc', 'treelstm'"):
        encoder("gru")
