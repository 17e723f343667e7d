"""`speed.cuda_graphs` beside the settings that once left every pass eager (issue 80's review):
mixed precision (autocast's weight cache refuses every capture), SPINN-PI-NT's level-wise default
(the level-wise runner reads tree heights back to the host), and a `parser` block's own network
(never wrapped). Each now works or is refused when the encoder is built, naming the key. What
runs on the CPU here is what decides it: the capture itself is tests/core/test_cuda_graphs.py's
(CUDA only)."""

import random

import pytest
import torch
from allennlp.common import Params
from allennlp.modules.seq2vec_encoders import Seq2VecEncoder

from spinn_allennlp.modules.encoder_settings import SettingsError
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_core.graphs import GraphedPasses, GraphedSpinn
from spinn_core.policies import Given
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch


def build(**settings) -> SpinnEncoder:
    torch.manual_seed(0)
    return Seq2VecEncoder.from_params(
        Params({"type": "spinn", "input_dim": 4, "hidden_dim": 3, **settings})
    )


class Recording:
    """Stands in for a `GraphedSpinn`: records what each call sees, then runs the wrapped one."""

    def __init__(self, graphed: GraphedSpinn) -> None:
        self.graphed = graphed
        self.autocast_cache: list = []

    def __call__(self, *args, **kwargs):
        self.autocast_cache.append(torch.is_autocast_cache_enabled())
        return self.graphed(*args, **kwargs)


def test_mixed_precision_with_graphs_runs_autocast_without_its_cache():
    """A graph cannot be captured while autocast caches casts: with `cuda_graphs` the passes run
    under autocast with the cache off (without graphs, autocast's default, on)."""
    inputs, mask, transitions = make_batch([3, 5], 4, random.Random(0))
    graphed = build(speed={"mixed_precision": "bf16", "cuda_graphs": True})
    recording = Recording(graphed.cuda_graphs)
    graphed.cuda_graphs = recording  # type: ignore[assignment]
    graphed.encode(inputs, mask, transitions)
    assert recording.autocast_cache == [False]
    eager = build(speed={"mixed_precision": "bf16"})
    seen: list = []
    eager.spinn.register_forward_pre_hook(
        lambda module, args: seen.append(torch.is_autocast_cache_enabled())
    )
    eager.encode(inputs, mask, transitions)
    assert seen == [True]


def test_levelwise_true_beside_cuda_graphs_is_refused_naming_both_keys():
    with pytest.raises(SettingsError, match="speed.levelwise: true with speed.cuda_graphs"):
        build(speed={"levelwise": True, "cuda_graphs": True})
    # Left out, level-wise stays the eager default and the graphs replay the step loop.
    encoder = build(speed={"cuda_graphs": True})
    assert encoder.spinn.levelwise and encoder.cuda_graphs is not None


def test_the_graphs_of_a_levelwise_model_replay_the_step_loop_to_the_same_values():
    """SPINN-PI-NT with its level-wise default: the graphed pass (here its static-shape path
    without capture, what a graph records) is not refused, and computes in float64 what the
    eager level-wise pass does, gradients included."""
    torch.manual_seed(0)
    model = Spinn(5, 4).double()
    assert model.levelwise
    inputs, mask, transitions = make_batch([1, 4, 7, 2], 5, random.Random(1), dtype=torch.float64)
    passes = GraphedPasses(model, batch_size=8, capture=False)
    graphed = passes(inputs, mask, transitions, Given())
    assert graphed is not None and passes.eager == {}
    eager = model(inputs, mask, transitions)
    torch.testing.assert_close(graphed.sentence, eager.sentence, rtol=1e-12, atol=1e-12)
    graphed_grads = torch.autograd.grad(graphed.sentence.sum(), list(model.parameters()))
    eager_grads = torch.autograd.grad(eager.sentence.sum(), list(model.parameters()))
    for a, b in zip(graphed_grads, eager_grads):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_a_parser_block_s_own_network_is_replayed_too():
    """With `cuda_graphs`, the parser block's SPINN (its 2N - 1 sequential steps) goes through a
    `GraphedSpinn` of its own, as the composition's core does: every pass calls it."""
    encoder = build(parser={"hidden_dim": 3, "tracking_dim": 2}, speed={"cuda_graphs": True}).eval()
    assert isinstance(encoder.parser_graphs, GraphedSpinn)
    assert encoder.parser is not None and encoder.parser_graphs.spinn is encoder.parser.spinn
    recording = Recording(encoder.parser_graphs)
    encoder.parser_graphs = recording  # type: ignore[assignment]
    inputs, mask, _ = make_batch([3, 5], 4, random.Random(0))
    encoder.encode(inputs, mask)
    assert len(recording.autocast_cache) == 1
    # Without graphs there is nothing to wrap.
    assert build(parser={"hidden_dim": 3, "tracking_dim": 2}).parser_graphs is None
