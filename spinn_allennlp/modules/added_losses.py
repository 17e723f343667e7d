"""The losses an encoder adds to a model's in training (`AddedLosses`: its own weighted transition
loss, the soft stack's strength entropy): in the model's own loss where the model books them (our
models: `SentenceEncoderModel`), else carried into its backward pass through the sentence
vectors; counted either way, so that the model can report them (`encoder_loss_metrics`)."""

from typing import Dict, List, Optional, Tuple

import torch
from allennlp.modules import Seq2VecEncoder

from spinn_core.gradient_hooks import attach_loss


class AddedLosses:
    """The terms an encoder adds to the loss of its sentence vectors in training (its own
    weighted transition loss, the soft stack's strength entropy), kept so that a model reports
    them: `encoder_loss_metrics` gives each term's mean per training batch since the last
    reset, as the metric `encoder_NAME` (every `SentenceEncoderModel` reports it)."""

    def __init__(self) -> None:
        # name -> (running total as a float64 tensor, batches)
        self._totals: Dict[str, Tuple[torch.Tensor, int]] = {}
        # True once a model adds the terms to its own loss (`take`): then they are kept here,
        # not attached to the sentence vectors' gradient.
        self.booked = False
        self._pending: List[torch.Tensor] = []

    def attach(self, name: str, sentence: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
        """`loss` counted under `name`, and `sentence` as the model gets it: itself, the term
        kept for the model's loss (`take`), when the model books the encoder's terms; else
        `sentence` whose backward pass adds `loss`'s gradient (`attach_loss`: a model that
        knows nothing of them, such as AllenNLP's `basic_classifier`, still trains them)."""
        total, batches = self._totals.get(name, (0.0, 0))
        self._totals[name] = (total + loss.detach().double(), batches + 1)
        if self.booked:
            self._pending.append(loss)
            return sentence
        return attach_loss(sentence, loss)

    def take(self) -> Optional[torch.Tensor]:
        """The sum of the terms kept since the last call (None: none), for the model's loss."""
        if not self._pending:
            return None
        total = sum(self._pending[1:], self._pending[0])
        self._pending = []
        return total

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
