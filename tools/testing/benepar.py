"""A tiny benepar model for tests, trained once per process on the fixture trees.

Needs benepar (imported explicitly, not by `spinn_allennlp.testing`, which needs torch alone).
"""

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Tuple

import torch

from spinn_core.testing.paths import FIXTURES_ROOT
from tools import benepar_training

# 30 real SNLI dev lines with their labeled parses (40 distinct sentences).
PARSES_SAMPLE = FIXTURES_ROOT / "trees" / "snli_parses_sample.jsonl"


@functools.lru_cache(maxsize=None)
def tiny_benepar() -> Tuple[benepar_training.TrainResult, Path]:
    """A ~15k-parameter `ChartParser` trained for 30 steps (seconds, one thread) on
    `PARSES_SAMPLE`, saved as float16 where `benepar.Parser(path)` and the spaCy component load
    it; `encoder_max_len` 128, so sentences of more than 126 words are too long for it.
    Returns the training result and the file's path (removed when the process ends)."""
    trees = benepar_training.read_snli_trees(PARSES_SAMPLE)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        settings = benepar_training.TrainSettings(
            batch_size=8,
            learning_rate=2e-2,
            warmup_steps=5,
            max_steps=30,
            checks_per_epoch=1,
            decay_patience=100,
            seed=0,
        )
        result = benepar_training.train_parser(
            trees,
            trees,
            hparams=benepar_training.TINY_HPARAMS,
            settings=settings,
            log=lambda message: None,
        )
    finally:
        torch.set_num_threads(threads)
    directory = Path(tempfile.mkdtemp(prefix="tiny_benepar_"))
    atexit.register(shutil.rmtree, directory, True)
    path = directory / "tiny.pt"
    benepar_training.save_parser(result.parser, path)
    return result, path
