from typing import Optional

import torch
from allennlp.training.learning_rate_schedulers import LearningRateScheduler


@LearningRateScheduler.register("step_decay_per_batch")
class StepDecayPerBatch(LearningRateScheduler):
    """Multiplies the learning rate by `gamma` every `decay_steps` optimizer steps, counted in
    batches across epochs: the SPINN paper's schedule (x0.75 every 10k steps, §4.1).

    AllenNLP's `"step"` scheduler counts epochs, and `reduce_on_plateau` breaks on
    torch >= 2.7 (it passes `verbose=`), hence this one.

    Registered as a `LearningRateScheduler` with name "step_decay_per_batch".

    # Parameters

    optimizer : `torch.optim.Optimizer`
        Given by the trainer.
    decay_steps : `int`, optional (default = `10000`)
        Batches between two decays.
    gamma : `float`, optional (default = `0.75`)
        The factor applied at each decay.
    last_epoch : `int`, optional (default = `-1`)
        As in `LearningRateScheduler`.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        decay_steps: int = 10000,
        gamma: float = 0.75,
        last_epoch: int = -1,
    ) -> None:
        if decay_steps < 1:
            raise ValueError("decay_steps must be positive")
        self.decay_steps = decay_steps
        self.gamma = gamma
        self.batches_done = 0
        super().__init__(optimizer, last_epoch=last_epoch)

    def step(self, metric: Optional[float] = None) -> None:
        pass  # the schedule depends on batches only

    def step_batch(self, batch_num_total: Optional[int] = None) -> None:
        self.batches_done = (
            batch_num_total if batch_num_total is not None else self.batches_done + 1
        )
        for group, learning_rate in zip(self.optimizer.param_groups, self.get_values()):
            group["lr"] = learning_rate

    def get_values(self):
        factor = self.gamma ** (self.batches_done // self.decay_steps)
        return [base * factor for base in self.base_values]
