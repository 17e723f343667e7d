"""A trainer callback that kills its own process: an interruption at a known point, for the
recovery tests. A test-suite helper, not in the wheel: `python -m allennlp`, run from the
checkout, imports it by its full name."""

import os
import signal
from pathlib import Path
from typing import List

from allennlp.training.callbacks import TrainerCallback


class SigkillAt(TrainerCallback):
    """Sends SIGKILL to the training process right after a given training batch (before the
    checkpointer runs for it), once per point: `marker_dir` remembers which points have
    fired, so the same config can be run again with `--recover` and go on.

    Not registered by name (`--include-package` skips modules named `test*`): configs name it
    `"type": "tools.testing.callbacks.SigkillAt"`.

    # Parameters

    serialization_dir : `str`
        Given by the trainer.
    points : `List[List[int]]`
        (epoch, batch number within the epoch, from 1) after which to die.
    marker_dir : `str`
        Where a file per fired point is left.
    """

    def __init__(self, serialization_dir: str, points: List[List[int]], marker_dir: str):
        super().__init__(serialization_dir)
        self.points = [tuple(point) for point in points]
        self.marker_dir = Path(marker_dir)

    def on_batch(
        self,
        trainer,
        batch_inputs,
        batch_outputs,
        batch_metrics,
        epoch,
        batch_number,
        is_training,
        is_primary=True,
        batch_grad_norm=None,
        **kwargs,
    ):
        if not is_training or (epoch, batch_number) not in self.points:
            return
        marker = self.marker_dir / f"killed_e{epoch}_b{batch_number}"
        if marker.exists():
            return
        self.marker_dir.mkdir(parents=True, exist_ok=True)
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
