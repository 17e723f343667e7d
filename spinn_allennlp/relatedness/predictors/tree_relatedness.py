import logging
from typing import Any, Dict

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors import Predictor

from spinn_allennlp.predictors import LinePredictor

logger = logging.getLogger(__name__)

PREMISE_KEYS = ("sentence_A", "premise", "sentence1")
HYPOTHESIS_KEYS = ("sentence_B", "hypothesis", "sentence2")


@Predictor.register("tree_relatedness")
class TreeRelatednessPredictor(LinePredictor):
    """Predicts the relatedness (1-5) of sentence pairs given as JSON lines of raw text,
    `{"sentence_A": "...", "sentence_B": "..."}` (or `premise`/`hypothesis`). Trees come from the
    reader's tree source. Output per line: `relatedness` (the expected rating r^T p), `probs`
    (p over ratings 1..5). A line that can't be used gives `{"error": ..., "input": ...}` and
    the run goes on.

    Registered as a `Predictor` with name "tree_relatedness".
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if not isinstance(json_dict, dict):
            raise ValueError(f"expected a JSON object, got {type(json_dict).__name__}")
        sentences = []
        for keys in (PREMISE_KEYS, HYPOTHESIS_KEYS):
            value = next((json_dict[key] for key in keys if key in json_dict), None)
            if not isinstance(value, (str, list)):
                raise ValueError(f"expected a sentence under {' or '.join(keys)}")
            sentences.append(value)
        return self._dataset_reader.text_to_instance(*sentences)

    def _trim(self, output: Dict[str, Any]) -> Dict[str, Any]:
        metadata = output.pop("metadata", None) or {}
        output.pop("score", None)
        for key in ("premise_tokens", "hypothesis_tokens", "tree_source"):
            if key in metadata:
                output[key] = metadata[key]
        return output
