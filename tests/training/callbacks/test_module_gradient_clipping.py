"""Per-group gradient clipping (Havrylov et al.'s parser and composer clipped apart): each
group's gradients are rescaled together to a largest absolute value of at most `max_norm`,
whatever the other groups' size; and through AllenNLP's trainer, with the own-parser PPO
config on real ListOps lines, the gradients the optimizer steps on are so clipped."""

from types import SimpleNamespace
from typing import Dict, List

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.training.callbacks import ModuleGradientClipping
from tools.testing.configs import as_json, listops_config, listops_small_overrides


class TwoParts(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self._encoder = torch.nn.Module()
        self._encoder.parser = torch.nn.Linear(3, 2)
        self.classifier = torch.nn.Linear(3, 2)


def fake_trainer(model: torch.nn.Module, accumulation: int = 1) -> SimpleNamespace:
    # What the callback reads of a GradientDescentTrainer.
    return SimpleNamespace(model=model, _scaler=None, _num_gradient_accumulation_steps=accumulation)


def test_each_group_is_clipped_on_its_own(tmp_path):
    torch.manual_seed(0)
    model = TwoParts().double()
    inputs = torch.randn(4, 3, dtype=torch.float64)
    # The parser's gradients large (x 100), the classifier's small (x 0.01).
    loss = 100.0 * model._encoder.parser(inputs).sum() + 0.01 * model.classifier(inputs).sum()
    expected = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
    callback = ModuleGradientClipping(str(tmp_path), groups=[["_encoder\\.parser\\."]])
    callback.on_start(fake_trainer(model))
    assert callback.on_backward(fake_trainer(model), {"loss": loss}, backward_called=False)
    parser = list(model._encoder.parser.parameters())
    largest = max(float(p.grad.abs().max()) for p in parser)
    assert largest == pytest.approx(0.5, rel=1e-6)
    # Rescaled together: the direction of the parser's gradient is kept.
    scale = 0.5 / max(float(g.abs().max()) for g in expected[:2])
    for parameter, gradient in zip(parser, expected[:2]):
        torch.testing.assert_close(parameter.grad, scale * gradient)
    # The classifier's gradients, under 0.5, are left as they were.
    for parameter, gradient in zip(model.classifier.parameters(), expected[2:]):
        torch.testing.assert_close(parameter.grad, gradient)


def test_a_backward_pass_already_taken_is_clipped_not_repeated(tmp_path):
    model = TwoParts()
    loss = 50.0 * model.classifier(torch.ones(1, 3)).sum()
    loss.backward()
    callback = ModuleGradientClipping(str(tmp_path), groups=[["classifier"]], max_norm=0.25)
    callback.on_start(fake_trainer(model))
    assert not callback.on_backward(fake_trainer(model), {"loss": loss}, backward_called=True)
    assert float(model.classifier.weight.grad.abs().max()) == pytest.approx(0.25)
    assert model._encoder.parser.weight.grad is None


def test_settings_it_cannot_honour_are_errors(tmp_path):
    model = TwoParts()
    with pytest.raises(ConfigurationError, match="'tracker' matches no parameter"):
        ModuleGradientClipping(str(tmp_path), groups=[["tracker"]]).on_start(fake_trainer(model))
    with pytest.raises(ConfigurationError, match="num_gradient_accumulation_steps"):
        ModuleGradientClipping(str(tmp_path), groups=[["classifier"]]).on_start(
            fake_trainer(model, accumulation=2)
        )
    with pytest.raises(ConfigurationError, match="max_norm"):
        ModuleGradientClipping(str(tmp_path), groups=[["classifier"]], max_norm=0.0)


RECORDED: List[Dict[str, float]] = []


@TrainerCallback.register("test_record_gradients")
class RecordGradients(TrainerCallback):
    """After the backward pass (listed after the clipping), the largest absolute gradient of
    the parser and of the rest, as the optimizer will see them."""

    def on_backward(self, trainer, batch_outputs, backward_called: bool, **kwargs) -> bool:
        largest = {"parser": 0.0, "rest": 0.0}
        for name, parameter in trainer.model.named_parameters():
            if parameter.grad is not None:
                group = "parser" if name.startswith("_encoder.parser.") else "rest"
                largest[group] = max(largest[group], float(parameter.grad.abs().max()))
        RECORDED.append(largest)
        return False


def test_the_own_parser_ppo_config_steps_on_clipped_gradients(tmp_path):
    RECORDED.clear()
    name = "own_parser_ppo"
    overrides = listops_small_overrides(name)
    overrides["trainer.callbacks"] = [
        {"type": "restore_random_state"},
        # A clip far below the gradients' size, so that it acts on every batch.
        {
            "type": "module_gradient_clipping",
            "groups": [["_encoder\\.parser\\."]],
            "max_norm": 1e-3,
        },
        {"type": "test_record_gradients"},
        {"type": "parser_updates"},
    ]
    train_model_from_file(listops_config(name), tmp_path, overrides=as_json(overrides))
    assert RECORDED
    for largest in RECORDED:
        # Each group's largest gradient at the clip: torch scales by max_norm / (norm + 1e-6),
        # so for a norm n >= 1e-3 before the clip it lands within 1e-6 / n <= 1e-3 below it.
        assert largest["rest"] == pytest.approx(1e-3, rel=1e-3)
        # The parser's: at most the clip (its own gradient can be smaller: its own group).
        assert largest["parser"] <= 1e-3
    assert any(largest["parser"] > 0.0 for largest in RECORDED)
