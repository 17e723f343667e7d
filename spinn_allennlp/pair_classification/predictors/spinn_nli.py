import logging
from typing import Any, Dict, List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors import Predictor

logger = logging.getLogger(__name__)


@Predictor.register("spinn_nli")
class SpinnNliPredictor(Predictor):
    """Predicts NLI labels and trees for JSON lines of raw text,
    `{"premise": "...", "hypothesis": "..."}`, or SNLI-style lines with `sentence1`,
    `sentence2` and optionally `sentence1_binary_parse`/`sentence2_binary_parse` (any field the
    `snli_transitions` reader accepts; `gold_label` is ignored).

    Without parses the tree comes from the model's own parser (full SPINN) or, for a model
    without one, the encoder's balanced default tree; `*_transitions_source` in the output says
    which. A line that can't be used gives `{"error": ..., "input": ...}` for that line and the
    run goes on.

    Registered as a `Predictor` with name "spinn_nli".
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if not isinstance(json_dict, dict):
            raise ValueError(f"expected a JSON object, got {type(json_dict).__name__}")
        return self._dataset_reader.example_to_instance(  # type: ignore[attr-defined]
            json_dict, use_label=False
        )

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        results: List[Any] = [None] * len(inputs)
        good: List[int] = []
        instances: List[Instance] = []
        for position, json_dict in enumerate(inputs):
            try:
                instances.append(self._json_to_instance(json_dict))
                good.append(position)
            except (ValueError, TypeError, KeyError) as error:
                logger.warning("skipped input %d: %s", position, error)
                results[position] = {"error": str(error), "input": json_dict}
        if instances:
            for position, output in zip(good, self.predict_batch_instance(instances)):
                results[position] = _trim(output)
        return results

    def predict_instance(self, instance: Instance) -> JsonDict:
        return _trim(super().predict_instance(instance))


def _trim(output: Dict[str, Any]) -> Dict[str, Any]:
    # Raw transition ids and metadata are in the trees already; keep the output readable.
    for key in ("metadata", "premise_transitions", "hypothesis_transitions"):
        output.pop(key, None)
    return output
