"""The `parser_warmup` callback through AllenNLP's trainer (`listops_spinn_reinforce_warmup`,
small, on real ListOps lines): while it holds, the run is exactly a run whose parser has
learning rate 0 (the parser keeps its initial weights, everything else trains the same), and
after it the parser trains."""

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError

from spinn_allennlp.modules.policy_gradient import ParserUpdate
from tools.testing.configs import as_json, listops_config, listops_small_overrides

# 24 lines in batches of 4; gradient clipping that never acts (its norm would count the
# gradients the lr-0 parser still gets).
SIX_BATCHES = {"data_loader": {"batch_sampler": None, "batch_size": 4}, "trainer.grad_norm": 1e9}
PARSER_LR_ZERO = {
    "trainer.optimizer.parameter_groups": [[["_encoder\\.spinn\\.tracker\\."], {"lr": 0.0}]],
    "trainer.callbacks": [{"type": "restore_random_state"}],
}


def train(directory, **overrides):
    config = listops_config("spinn_reinforce_warmup")
    overrides = listops_small_overrides("spinn_reinforce_warmup", **SIX_BATCHES, **overrides)
    model = train_model_from_file(config, directory, overrides=as_json(overrides))
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def warmup(batches):
    return {
        "trainer.callbacks": [
            {"type": "restore_random_state"},
            {"type": "parser_warmup", "batches": batches},
        ]
    }


def test_a_frozen_parser_is_a_parser_with_learning_rate_zero(tmp_path):
    train(tmp_path / "frozen", **warmup(6), **{"trainer.num_epochs": 2})
    # The weights after the second epoch (its checkpoint; the trainer returns the best epoch's).
    (last,) = (tmp_path / "frozen").glob("model_state_e2_*.th")
    frozen = torch.load(last, map_location="cpu")
    # lr 0 on the parser's group; it still gets gradients, which reach nothing else
    # (parser_trains_nodes: false), so every parameter must end bit for bit the same.
    still = train(tmp_path / "lr0", **PARSER_LR_ZERO, **{"trainer.num_epochs": 1})
    once = train(tmp_path / "frozen1", **warmup(6), **{"trainer.num_epochs": 1})
    parser = [name for name in once if ".tracker." in name]
    assert parser and len(parser) < len(once)
    for name in once:
        assert torch.equal(once[name], still[name]), name
    # The second epoch: unfrozen, the parser moves.
    assert [name for name in parser if torch.equal(frozen[name], once[name])] == []


def test_ppo_updates_wait_for_the_warmup(tmp_path):
    """PPO's further updates (the parser_updates callback) are skipped while the parser is
    frozen, and taken after: the parser ends as a run whose parser has learning rate 0 after
    one epoch of warm-up, and moves in the second."""
    config = listops_config("spinn_ppo")
    callbacks = {
        "trainer.callbacks": [
            {"type": "restore_random_state"},
            {"type": "parser_warmup", "batches": 6},
            {"type": "parser_updates"},
        ]
    }
    overrides = listops_small_overrides(
        "spinn_ppo", **SIX_BATCHES, **callbacks, **{"trainer.num_epochs": 2}
    )
    train_model_from_file(config, tmp_path / "ppo", overrides=as_json(overrides))
    (first,) = (tmp_path / "ppo").glob("model_state_e1_*.th")
    (second,) = (tmp_path / "ppo").glob("model_state_e2_*.th")
    first, second = torch.load(first), torch.load(second)
    parser = [name for name in first if ".tracker." in name]
    fresh = train(tmp_path / "lr0", **PARSER_LR_ZERO, **{"trainer.num_epochs": 1})
    for name in parser:
        assert torch.equal(first[name], fresh[name]), name
        assert not torch.equal(second[name], first[name]), name


def test_batches_must_be_positive(tmp_path):
    with pytest.raises(ConfigurationError, match="batches must be positive"):
        train(tmp_path / "run", **warmup(0))


def test_ppo_with_a_parser_of_its_own_waits_for_the_warmup(tmp_path):
    """A parser with a network of its own gets no gradient while frozen, so the model makes no
    PPO update then (once a crash: the callback took 'no update' for a missing setting): the
    run trains, its parser stays at its initial weights through the warm-up (as a run frozen
    throughout), and after it every batch's 14 further updates are taken."""
    config = listops_config("own_parser_ppo")
    taken = []
    surrogate = ParserUpdate.loss

    def counted(update):
        taken.append(update)
        return surrogate(update)

    def run(directory, batches):
        callbacks = {
            "trainer.callbacks": [
                {"type": "restore_random_state"},
                {"type": "parser_warmup", "batches": batches},
                {"type": "parser_updates"},
            ]
        }
        overrides = listops_small_overrides(
            "own_parser_ppo", **SIX_BATCHES, **callbacks, **{"trainer.num_epochs": 2}
        )
        train_model_from_file(config, directory, overrides=as_json(overrides))
        return [
            torch.load(next(directory.glob(f"model_state_e{epoch}_*.th")), map_location="cpu")
            for epoch in (1, 2)
        ]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ParserUpdate, "loss", counted)
        first, second = run(tmp_path / "warmup", 6)
        assert len(taken) == 6 * 14  # the second epoch's six batches
        frozen = run(tmp_path / "frozen", 12)[1]
        assert len(taken) == 6 * 14  # frozen throughout: none more
    parser = [name for name in first if name.startswith("_encoder.parser.")]
    assert parser and len(parser) < len(first)
    for name in parser:
        assert torch.equal(first[name], frozen[name]), name
        assert not torch.equal(second[name], first[name]), name
