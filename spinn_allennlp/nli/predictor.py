import logging
from typing import Any, Dict, List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors import Predictor

logger = logging.getLogger(__name__)


@Predictor.register("spinn_nli")
class SpinnNliPredictor(Predictor):
    """Predicts NLI labels and trees for JSON lines of raw text,
    ``{"premise": "...", "hypothesis": "..."}``, or SNLI-style lines with ``sentence1``,
    ``sentence2`` and optionally ``sentence1_binary_parse``/``sentence2_binary_parse``.

    Without parses the tree comes from the model's own parser (full SPINN) or, for a model
    without one, the encoder's balanced default tree; ``*_transitions_source`` in the output
    says which. A line that can't be read gives ``{"error": ..., "input": ...}`` for that line
    and the run goes on.
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        def first(*keys):
            for key in keys:
                if json_dict.get(key) is not None:
                    return json_dict[key]
            return None

        premise, hypothesis = first("premise", "sentence1"), first("hypothesis", "sentence2")
        if premise is None or hypothesis is None:
            raise ValueError('each line needs "premise" and "hypothesis" (or "sentence1" and '
                             '"sentence2")')
        return self._dataset_reader.text_to_instance(
            premise=first("premise", "sentence1"),
            hypothesis=first("hypothesis", "sentence2"),
            premise_binary_parse=first("sentence1_binary_parse", "premise_binary_parse"),
            hypothesis_binary_parse=first("sentence2_binary_parse", "hypothesis_binary_parse"),
        )

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        results: List[Any] = [None] * len(inputs)
        good: List[int] = []
        instances: List[Instance] = []
        for position, json_dict in enumerate(inputs):
            try:
                if not isinstance(json_dict, dict):
                    raise ValueError("expected a JSON object")
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
