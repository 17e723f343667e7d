"""The losses an encoder adds to a model's in training (`AddedLosses`: its own weighted transition
loss, the soft stack's strength entropy), carried into the model's backward pass and counted so
that the model can report them (`encoder_loss_metrics`)."""

from typing import Dict, Tuple

import torch
from allennlp.modules import Seq2VecEncoder

from spinn_core.gradient_hooks import attach_loss


class AddedLosses:
    """The terms an encoder adds to the loss of its sentence vectors in training (its own
    weighted transition loss, the soft stack's strength entropy), kept so that a model reports
    them: `encoder_loss_metrics` gives each term's mean per training batch since the last
    reset, as the metric `encoder_NAME` (the models spinn_classifier and spinn_nli report it;
    what `attach_loss` adds is otherwise invisible in the trainer's loss)."""

    def __init__(self) -> None:
        # name -> (running total as a float64 tensor, batches)
        self._totals: Dict[str, Tuple[torch.Tensor, int]] = {}

    def attach(self, name: str, sentence: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
        """`sentence`, whose backward pass adds `loss`'s gradient (`attach_loss`); `loss`
        counted under `name`."""
        total, batches = self._totals.get(name, (0.0, 0))
        self._totals[name] = (total + loss.detach().double(), batches + 1)
        return attach_loss(sentence, loss)

    def get_metric(self, reset: bool) -> Dict[str, float]:
        metrics = {
            f"encoder_{name}": float(total) / batches
            for name, (total, batches) in self._totals.items()
        }
        if reset:
            self._totals = {}
        return metrics


def encoder_loss_metrics(encoder: Seq2VecEncoder, reset: bool) -> Dict[str, float]:
    """The losses `encoder` added in training (`AddedLosses`); none for other encoders."""
    added = getattr(encoder, "added_losses", None)
    return added.get_metric(reset) if isinstance(added, AddedLosses) else {}
