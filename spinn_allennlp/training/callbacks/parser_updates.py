from typing import Any, Dict, List

import torch
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.modules.policy_gradient import PolicyGradient
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.settings_errors import configuration_errors
from spinn_allennlp.training.callbacks.module_gradient_clipping import ModuleGradientClipping
from spinn_allennlp.training.callbacks.training_batch_callback import TrainingBatchCallback
from spinn_core import rules


@TrainerCallback.register("parser_updates")
class ParserUpdates(TrainingBatchCallback):
    """Takes PPO's further updates of a latent parser (`policy_gradient.updates_per_batch` > 1,
    `modules/policy_gradient.py`): after the trainer's step on a batch, it takes the updates
    waiting in the model's `PolicyGradient` modules (`take_updates`); for each this computes the
    clipped surrogate with the parser as it is now, backpropagates it, keeps the gradients of
    the parser's parameters only (every `spinn` encoder's `parser_parameters()`: the
    rest of the model moves once per batch, with the task's loss), clips them as the
    trainer's `module_gradient_clipping` callback (if it has one) and the trainer itself do,
    and steps the trainer's optimizer (Adam skips parameters without a gradient, so only the
    parser moves; give it its own learning rate with the optimizer's `parameter_groups`).

    Why a callback: a model cannot step the optimizer, and AllenNLP's trainer takes one step
    per batch. `on_batch` runs after that step and before the checkpoint is written, so a run
    resumed with `--recover` goes on as the uninterrupted one would.

    While the parser is frozen (`parser_warmup`), the further updates are skipped.

    The batch's metrics get `parser_clipped`: the fraction of trees whose probability ratio
    was outside PPO's clipping range at the last further update (0 means the clip never acted).

    Registered as a `TrainerCallback` with name "parser_updates".
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self._parser: List[torch.nn.Parameter] = []
        self._frozen = False

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        self._parser = [
            parameter
            for module in trainer.model.modules()
            if isinstance(module, SpinnEncoder)
            for parameter in module.parser_parameters()
        ]
        # Said at the start, not at the first batch with updates: under parser_warmup a parser
        # with a network of its own makes none until it is unfrozen (thousands of batches in).
        further = any(
            module.updates_per_batch > 1
            for module in trainer.model.modules()
            if isinstance(module, PolicyGradient)
        )
        with configuration_errors():
            rules.check_parser_updates(
                uses_amp=getattr(trainer, "_scaler", None) is not None,
                has_parser=bool(self._parser),
                makes_further_updates=further,
            )

    def on_backward(self, trainer, batch_outputs, backward_called: bool, **kwargs) -> bool:
        # Whether the parser is frozen during this batch's pass, before on_batch's callbacks
        # (parser_warmup's unfreezing after its last frozen batch) change it.
        self._frozen = not any(parameter.requires_grad for parameter in self._parser)
        return False

    def on_training_batch(self, trainer, batch_number: int, batch_metrics: Dict[str, Any]) -> None:
        updates = [
            update
            for module in trainer.model.modules()
            if isinstance(module, PolicyGradient)
            for update in module.take_updates()
        ]
        if self._frozen:
            # The parser was frozen (parser_warmup) while this batch's trees were drawn: its
            # further updates, if the model made any (a parser with a network of its own makes
            # none while frozen: nothing could train it), are skipped, counted as done.
            for update in updates:
                update.taken = update.further
            return
        # (updates_per_batch > 1 was checked at the start: none means the model dropped them.)
        with configuration_errors():
            rules.check_further_updates_made(bool(updates))
        parser = {id(parameter) for parameter in self._parser}
        # Per-group clips (module_gradient_clipping) apply to these updates as to the step's.
        module_clippings = [
            callback
            for callback in getattr(trainer, "_callbacks", [])
            if isinstance(callback, ModuleGradientClipping)
        ]
        # The rest of the model is frozen meanwhile: the backward pass then stops where no
        # parser parameter lies behind (the composition's weights, the embeddings), and no
        # gradient but the parser's is made.
        frozen = [p for p in trainer.model.parameters() if p.requires_grad and id(p) not in parser]
        for parameter in frozen:
            parameter.requires_grad_(False)
        try:
            for update in updates:
                for _ in range(update.further):
                    trainer.optimizer.zero_grad()
                    for parameter in frozen:
                        parameter.grad = None
                    update.loss().backward()
                    for clipping in module_clippings:
                        clipping.clip()
                    trainer.rescale_gradients()
                    trainer.clip_gradient()
                    trainer.optimizer.step()
                batch_metrics["parser_clipped"] = update.clipped_fraction
        finally:
            for parameter in frozen:
                parameter.requires_grad_(True)
