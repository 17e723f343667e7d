import math
import re
from typing import List, Set

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules


@TrainerCallback.register("module_gradient_clipping")
class ModuleGradientClipping(TrainerCallback):
    """Clips the gradient of each group of parameters on its own, as Havrylov et al. (2019)
    clip their parser's and their composer's separately: after the backward pass, each
    group's gradients are rescaled together so that their norm (by default the largest
    absolute value, `norm_type` inf) is at most `max_norm`. AllenNLP's trainer has one
    `grad_norm` over the whole model, and one large gradient of the task's network would then
    shrink the parser's step too.

    `groups`: lists of regular expressions over parameter names, as the optimizer's
    `parameter_groups` take them (`[["_encoder\\\\.parser\\\\."]]`: the parser of its own);
    the parameters in no group form one more group, the rest of the model. Every expression
    must match some parameter. PPO's further parser updates (`parser_updates`) are clipped the
    same way. The trainer's own `grad_norm` and `grad_clipping` still act afterwards, over the
    whole model: leave them out of a config that wants these clips alone.

    Not with gradient accumulation or mixed precision (`use_amp`): the clip needs the whole
    batch's gradients, unscaled, right after one backward pass.

    Registered as a `TrainerCallback` with name "module_gradient_clipping".
    """

    def __init__(
        self,
        serialization_dir: str,
        groups: List[List[str]],
        max_norm: float = 0.5,
        norm_type: float = math.inf,
    ) -> None:
        super().__init__(serialization_dir)
        if max_norm <= 0:
            raise ConfigurationError(
                f"module_gradient_clipping: max_norm must be above 0, got {max_norm}"
            )
        self.patterns = [[re.compile(pattern) for pattern in group] for group in groups]
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.groups: List[List[torch.nn.Parameter]] = []

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        # Frozen parameters too (a parser frozen by parser_warmup thaws later): one without a
        # gradient is passed over when the groups are clipped.
        named = list(trainer.model.named_parameters())
        with configuration_errors():
            rules.check_gradient_clipping(
                uses_amp=getattr(trainer, "_scaler", None) is not None,
                accumulation_steps=getattr(trainer, "_num_gradient_accumulation_steps", 1),
                patterns_without_parameters=[
                    pattern.pattern
                    for patterns in self.patterns
                    for pattern in patterns
                    if not any(pattern.search(name) for name, _ in named)
                ],
            )
        taken: Set[int] = set()
        self.groups = []
        for patterns in self.patterns:
            members = [
                p
                for name, p in named
                if id(p) not in taken and any(pattern.search(name) for pattern in patterns)
            ]
            taken.update(id(p) for p in members)
            self.groups.append(members)
        rest = [p for _, p in named if id(p) not in taken]
        if rest:
            self.groups.append(rest)

    def clip(self) -> None:
        """Clips every group's gradients now (nothing is read back to the host)."""
        for parameters in self.groups:
            with_grad = [p for p in parameters if p.grad is not None]
            if with_grad:
                torch.nn.utils.clip_grad_norm_(with_grad, self.max_norm, self.norm_type)

    def on_backward(self, trainer, batch_outputs, backward_called: bool, **kwargs) -> bool:
        if not backward_called:
            batch_outputs["loss"].backward()
        self.clip()
        return not backward_called
