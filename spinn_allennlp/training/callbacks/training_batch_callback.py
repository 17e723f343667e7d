"""A trainer callback that acts after each training batch only: AllenNLP's `on_batch`, which the
trainer calls after the optimizer's step on a training batch and after each validation batch,
narrowed to the training batches and to what our callbacks read of them."""

from typing import Any, Dict, List, Optional

from allennlp.training.callbacks import TrainerCallback


class TrainingBatchCallback(TrainerCallback):
    """Calls :meth:`on_training_batch` after the trainer's step on each training batch (not
    after validation batches), before the checkpoint is written."""

    def on_training_batch(self, trainer, batch_number: int, batch_metrics: Dict[str, Any]) -> None:
        """After the trainer's step on a training batch: `batch_number`, the epoch's batches
        completed, this one included; `batch_metrics`, the batch's metrics as the trainer
        reports them, to add to."""
        raise NotImplementedError

    def on_batch(
        self,
        trainer,
        batch_inputs: List[Dict[str, Any]],
        batch_outputs: List[Dict[str, Any]],
        batch_metrics: Dict[str, Any],
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        batch_grad_norm: Optional[float] = None,
        **kwargs,
    ) -> None:
        if is_training:
            self.on_training_batch(trainer, batch_number, batch_metrics)
