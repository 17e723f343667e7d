import logging
from typing import Any, Dict, Optional, Union

from allennlp.common import Params
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

from spinn_allennlp.data.dataset_readers import TreeDatasetReader
from spinn_allennlp.data.tree_sources import TreeSource
from spinn_allennlp.predictors import LinePredictor
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules

logger = logging.getLogger(__name__)


@Predictor.register("spinn_nli")
class SpinnNliPredictor(LinePredictor):
    """Predicts NLI labels and trees for JSON lines of raw text,
    `{"premise": "...", "hypothesis": "..."}`, or SNLI-style lines with `sentence1`,
    `sentence2` and optionally `sentence1_binary_parse`/`sentence2_binary_parse` (any field the
    `snli_transitions` reader accepts; `gold_label` is ignored).

    Without parses the trees come from the reader's tree source: the one the archive was
    trained with (its config's `dataset_reader.tree_source`), unless overridden with
    `--overrides '{"dataset_reader.tree_source": {"type": "benepar"}}'` or this predictor's
    `tree_source` (`--predictor-args '{"tree_source": "benepar"}'`). Without a tree source the
    model decides: its own parser (full SPINN) or, for a model without one, the encoder's
    balanced default tree. `*_transitions_source` in the output says which made each tree.

    Every input gets exactly one output, in order. One that can't be used (a line that is not
    JSON, a blank line under `allennlp predict`, a field of the wrong type, an empty sentence,
    a parse that doesn't match its text, or anything the model fails on) gives `{"error": ...,
    "input": ...}` and the run goes on. From Python: `predictor.predict(premise=...,
    hypothesis=...)`.

    Registered as a `Predictor` with name "spinn_nli".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
        A `TreeDatasetReader` (`snli_transitions`) when `tree_source` is given.
    frozen : `bool`, optional (default = `True`)
    tree_source : `Union[str, Dict[str, Any], TreeSource]`, optional (default = `None`)
        Replaces the reader's tree source: a registered name (`"benepar"`, `"balanced"`, ...),
        its parameters (`{"type": "spinn", "archive": "out/spinn/model.tar.gz"}`), a
        `TreeSource`, or `"none"` for no tree source (the model decides). `None` keeps the
        archive's.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        tree_source: Optional[Union[str, Dict[str, Any], TreeSource]] = None,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        if tree_source is not None:
            with configuration_errors():
                rules.check_tree_source_reader(
                    "tree_source",
                    type(dataset_reader).__name__,
                    isinstance(dataset_reader, TreeDatasetReader),
                )
            assert isinstance(dataset_reader, TreeDatasetReader)  # (checked: for mypy)
            dataset_reader.tree_source = tree_source_from(tree_source)

    def predict(self, premise: str, hypothesis: str) -> JsonDict:
        """The output for one pair of raw sentences (an `{"error": ...}` for a bad one)."""
        return self.predict_json({"premise": premise, "hypothesis": hypothesis})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if not isinstance(json_dict, dict):
            raise ValueError(f"expected a JSON object, got {type(json_dict).__name__}")
        return self._dataset_reader.example_to_instance(  # type: ignore[attr-defined]
            json_dict, use_label=False
        )

    def _trim(self, output: Dict[str, Any]) -> Dict[str, Any]:
        # Raw transition ids and metadata are in the trees already; keep the output readable.
        for key in ("metadata", "premise_transitions", "hypothesis_transitions"):
            output.pop(key, None)
        return output


def tree_source_from(
    tree_source: Union[str, Dict[str, Any], TreeSource],
) -> Optional[TreeSource]:
    """A tree source from a registered name, its parameters or itself; None for "none"."""
    if isinstance(tree_source, TreeSource):
        return tree_source
    if tree_source == "none":
        return None
    params = {"type": tree_source} if isinstance(tree_source, str) else dict(tree_source)
    return TreeSource.from_params(Params(params))
