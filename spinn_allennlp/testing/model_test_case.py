"""`ModelTestCase` with two fixes every model of this project needs."""

import copy
from pathlib import Path
from typing import Any, Dict, Union

import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.models.archival import CONFIG_NAME, archive_model


class SpinnModelTestCase(ModelTestCase):
    """AllenNLP's `ModelTestCase`, with:

    * `check_model_computes_gradients_correctly` leaving the model as it found it. AllenNLP
      runs this training-mode pass on the trained model only, just before comparing it with its
      saved-and-loaded copy, so it would move the batch-norm running statistics of one of the
      two and the comparison would fail for any model with batch norm.
    * `ensure_batch_predictions_are_consistent` in float64. Single-vs-batch agreement is an
      exactness claim (no padding leaks into a sentence); in float32 the kernels BLAS picks
      for a batch of one and a batch of many round differently, by amounts that depend on the
      CPU, and AllenNLP's fixed 1e-6 tolerance is not derived from any of it. In float64 the
      rounding is ~1e-15 and 1e-6 tests exactly the claim.
    """

    def set_up_model_with_overrides(
        self,
        param_file: Union[str, Path],
        dataset_file: Union[str, Path],
        overrides: Dict[str, Any],
    ) -> None:
        """`set_up_model` on `param_file` with `overrides` applied (e.g. small sizes), so the
        checks on `self.model` (batch consistency) run on the same small model that
        `ensure_model_can_train_save_and_load` trains."""
        params = Params.from_file(str(param_file), params_overrides=overrides)
        path = self.TEST_DIR / "overridden_config.json"
        params.to_file(str(path))
        self.set_up_model(path, Path(dataset_file))

    @staticmethod
    def check_model_computes_gradients_correctly(model, *args, **kwargs):
        state = copy.deepcopy(model.state_dict())
        result = ModelTestCase.check_model_computes_gradients_correctly(model, *args, **kwargs)
        model.load_state_dict(state)
        return result

    def ensure_batch_predictions_are_consistent(self, keys_to_ignore=()):
        dtype = next(self.model.parameters()).dtype
        self.model.double()
        try:
            with _default_dtype(torch.float64):
                super().ensure_batch_predictions_are_consistent(keys_to_ignore)
        finally:
            self.model.to(dtype)


def archive_untrained(
    config: Union[str, Path], overrides: Dict[str, Any], directory: Path, vocab: Vocabulary
) -> str:
    """An archive as `allennlp train` leaves one (config, vocabulary, weights), of the model
    `config` with `overrides` builds for `vocab`, untrained. Returns its path."""
    params = Params.from_file(str(config), params_overrides=overrides)
    model = Model.from_params(vocab=vocab, params=params.duplicate()["model"])
    directory.mkdir(parents=True)
    params.to_file(str(directory / CONFIG_NAME))
    vocab.save_to_files(str(directory / "vocabulary"))
    torch.save(model.state_dict(), directory / "best.th")
    return archive_model(directory)


class _default_dtype:
    """Float tensors made from data (e.g. `TensorField`s) in float64 too, while active."""

    def __init__(self, dtype: torch.dtype) -> None:
        self.dtype = dtype
        self.previous = torch.get_default_dtype()

    def __enter__(self) -> None:
        torch.set_default_dtype(self.dtype)

    def __exit__(self, *exc) -> None:
        torch.set_default_dtype(self.previous)
