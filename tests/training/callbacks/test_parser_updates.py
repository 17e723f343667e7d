"""PPO's further parser updates through AllenNLP's trainer (`listops_spinn_ppo`, small, on real
ListOps lines): they move the parser alone, as many times as asked, and a run set up without
the callback (or the callback without the updates) stops with an error that says what to set."""

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError

from spinn_allennlp.modules.policy_gradient import UNTAKEN_LIMIT, ParserUpdate
from tools.testing.configs import as_json, listops_config, listops_small_overrides

ONE_BATCH = {"data_loader": {"batch_sampler": None, "batch_size": 1000}}
WITHOUT_CALLBACK = {"trainer.callbacks": [{"type": "restore_random_state"}]}


def train_ppo(directory, **overrides):
    config = listops_config("spinn_ppo")
    overrides = listops_small_overrides("spinn_ppo", **overrides)
    model = train_model_from_file(config, directory, overrides=as_json(overrides))
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def test_further_updates_move_the_parser_alone(tmp_path):
    """One batch (the whole sample), one epoch, the same seeds: REINFORCE alone and REINFORCE +
    3 PPO updates take the same first step, so every parameter outside the parser ends equal
    and the parser's differ."""
    reinforce = train_ppo(
        tmp_path / "reinforce",
        **ONE_BATCH,
        **WITHOUT_CALLBACK,
        **{"model.policy_gradient.updates_per_batch": 1},
    )
    ppo = train_ppo(tmp_path / "ppo", **ONE_BATCH, **{"model.policy_gradient.updates_per_batch": 4})
    parser = [name for name in ppo if ".tracker." in name]
    assert parser and len(parser) < len(ppo)
    for name in ppo:
        if name in parser:
            assert not torch.equal(ppo[name], reinforce[name]), name
        else:
            assert torch.equal(ppo[name], reinforce[name]), name


def test_updates_without_the_callback_are_an_error(tmp_path):
    """Found within the first UNTAKEN_LIMIT batches (here 24 batches of one line)."""
    one_line_batches = {"data_loader": {"batch_sampler": None, "batch_size": 1}}
    assert UNTAKEN_LIMIT < 24
    with pytest.raises(ConfigurationError, match="parser_updates"):
        train_ppo(tmp_path / "run", **WITHOUT_CALLBACK, **one_line_batches)


def test_the_callback_without_updates_is_an_error(tmp_path):
    with pytest.raises(ConfigurationError, match="updates_per_batch above 1"):
        train_ppo(tmp_path / "run", **{"model.policy_gradient.updates_per_batch": 1})


def test_gradient_accumulation_takes_every_batchs_updates(tmp_path):
    """Under gradient accumulation the callback runs once per group of batches and takes the
    updates of each batch in it; no batch's are left."""
    taken = []
    surrogate = ParserUpdate.loss

    def counted(update):
        taken.append(update)
        return surrogate(update)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ParserUpdate, "loss", counted)
        train_ppo(
            tmp_path / "run",
            **{
                "data_loader": {"batch_sampler": None, "batch_size": 1},
                "trainer.num_gradient_accumulation_steps": 4,
            },
        )
    # 24 one-line batches, each with 3 further updates.
    assert len(taken) == 24 * 3 and len({id(update) for update in taken}) == 24
