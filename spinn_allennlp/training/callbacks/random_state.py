import logging
import random
from typing import Any, Dict, Iterator, Optional

import numpy
import torch
from allennlp.data import DataLoader, TensorDict
from allennlp.training.callbacks import TrainerCallback

from spinn_allennlp.training.callbacks.training_batch_callback import TrainingBatchCallback

logger = logging.getLogger(__name__)


def get_random_state() -> Dict[str, Any]:
    """The state of every random generator training draws from: Python's (AllenNLP's batch
    samplers), NumPy's, torch's (dropout, initialisation) and CUDA's."""
    kind, keys, position, has_gauss, cached_gaussian = numpy.random.get_state(legacy=True)
    state = {
        "python": random.getstate(),
        # Plain types: checkpoints are read back with torch.load(weights_only=True).
        "numpy": (kind, numpy.asarray(keys).tolist(), position, has_gauss, cached_gaussian),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_random_state(state: Dict[str, Any]) -> None:
    random.setstate(state["python"])
    kind, keys, position, has_gauss, cached_gaussian = state["numpy"]
    keys = numpy.array(keys, dtype=numpy.uint32)
    numpy.random.set_state((kind, keys, position, has_gauss, cached_gaussian))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@TrainerCallback.register("restore_random_state")
class RestoreRandomState(TrainingBatchCallback):
    """Makes `allennlp train --recover` continue exactly as the interrupted run would have.

    AllenNLP's checkpoints hold the model, optimizer, learning-rate scheduler and metric
    tracker, and on recovery the trainer replays the data loader over the epochs and batches
    already done, but the random generators start again from the seeds: the recovered run
    draws other dropout masks, and other batch orders once validation (which also shuffles)
    has drawn from them. This callback saves the generators' states in every checkpoint and
    puts them back where the checkpoint was taken:

    * a checkpoint at the end of epoch k: when the data loader starts epoch k + 1;
    * a checkpoint after batch j of epoch k (`save_every_num_batches`): the states of the start
      of epoch k when the loader starts it (so it draws the same batch order), then the states
      of the checkpoint just before batch j + 1 is handed to the trainer.

    With the same seeds, threads and machine the recovered run then ends with the same weights
    and metrics, bit for bit, as one never interrupted (`tests/training/test_recover.py`).
    Assumes no gradient accumulation; in distributed training only the first worker's states
    are saved (AllenNLP checkpoints the primary's callbacks), so the others resume with its
    states and the run is no longer exactly the uninterrupted one.

    Registered as a `TrainerCallback` with name "restore_random_state".

    # Parameters

    serialization_dir : `str`
        Given by the trainer.
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self._epochs_completed = 0
        self._batches_in_epoch = 0
        self._epoch_start_state: Optional[Dict[str, Any]] = None
        self._restore: Optional[Dict[str, Any]] = None

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        super().on_start(trainer, is_primary, **kwargs)
        trainer.data_loader = _StateRecordingLoader(trainer.data_loader, self)

    def on_training_batch(self, trainer, batch_number: int, batch_metrics: Dict[str, Any]) -> None:
        self._batches_in_epoch = batch_number

    def on_epoch(self, trainer, metrics, epoch, is_primary=True, **kwargs) -> None:
        self._epochs_completed = epoch + 1
        self._batches_in_epoch = 0

    def state_dict(self) -> Dict[str, Any]:
        return {
            "epochs_completed": self._epochs_completed,
            "batches_in_epoch": self._batches_in_epoch,
            "epoch_start": self._epoch_start_state,
            "now": get_random_state(),
        }

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self._restore = state_dict
        self._epochs_completed = state_dict["epochs_completed"]
        self._batches_in_epoch = state_dict["batches_in_epoch"]
        self._epoch_start_state = state_dict["epoch_start"]

    def epoch_starts(self, epoch: int) -> Optional[int]:
        """Called by the loader when it starts an epoch (before it draws anything). Restores
        what a checkpoint says to restore here; returns the number of batches after which the
        checkpoint's own states must be restored, if any."""
        restore = self._restore
        after_batches = None
        if restore is not None and epoch == restore["epochs_completed"]:
            if restore["batches_in_epoch"] == 0:
                set_random_state(restore["now"])
                self._restore = None
            else:
                set_random_state(restore["epoch_start"])
                after_batches = restore["batches_in_epoch"]
            logger.info("random state restored from the checkpoint at epoch %d", epoch)
        self._epoch_start_state = get_random_state()
        return after_batches

    def batches_skipped(self) -> None:
        """Called by the loader when the batches a mid-epoch checkpoint covered have been
        handed out (and skipped by the trainer)."""
        assert self._restore is not None
        set_random_state(self._restore["now"])
        self._restore = None


class _StateRecordingLoader(DataLoader):
    """The trainer's data loader, telling the callback when each epoch starts and when the
    batches of a mid-epoch checkpoint have been skipped. Everything else is the loader's."""

    def __init__(self, loader: DataLoader, callback: RestoreRandomState) -> None:
        self._loader = loader
        self._callback = callback
        self._epochs_started = 0

    def __len__(self) -> int:
        return len(self._loader)

    def __iter__(self) -> Iterator[TensorDict]:
        epoch = self._epochs_started
        self._epochs_started += 1
        after_batches = self._callback.epoch_starts(epoch)
        for number, batch in enumerate(self._loader):
            if number == after_batches:
                self._callback.batches_skipped()
            yield batch

    def iter_instances(self):
        return self._loader.iter_instances()

    def index_with(self, vocab) -> None:
        self._loader.index_with(vocab)

    def set_target_device(self, device: torch.device) -> None:
        self._loader.set_target_device(device)

    def __getattr__(self, name: str) -> Any:
        if name == "_loader":  # not set yet (e.g. while unpickling)
            raise AttributeError(name)
        return getattr(self._loader, name)
