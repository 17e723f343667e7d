from typing import Any, Dict

from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

from spinn_allennlp.data.trees import readable_tree
from spinn_allennlp.predictors import LinePredictor
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules
from spinn_core.transitions import PAD


@Predictor.register("spinn_classifier")
class SpinnClassifierPredictor(LinePredictor):
    """Classifies one sentence per JSON line, `{"sentence": "..."}`, with the archive's reader:

    * `text_classification_transitions`: raw text (its `text` key works too), with an optional
      `"binary_parse"` that gives the tree; without one the reader's tree source or the model's
      own parser does;
    * `listops`: an expression, `{"sentence": "[MAX 2 [MIN 4 7 ] 0 ]"}`, with the published
      files' brackets or without (the gold tree is the one its lists imply).

    A line may carry its `"label"`: it is checked as the reader checks a training line (a
    ListOps label must be the expression's value) and returned as `gold_label`, not given to
    the model. Output per line: `label`, `probs`, and for tree encoders `tree` (the tree the
    model followed), `transitions` (its SHIFT = 0 / REDUCE = 1 steps, 2N - 1 for N tokens, no
    padding) and `transitions_source`; `gold_tree` when the line's tree is the gold one (a
    parse in the line; any ListOps expression). Every line gets exactly one output, in order:
    one that can't be used (not JSON, an empty sentence, a malformed parse or expression, a
    wrong label, or anything the model fails on) gives `{"error": ..., "input": ...}` and the
    run goes on. It is the default predictor of `spinn_classifier` archives.

    Registered as a `Predictor` with name "spinn_classifier".
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        with configuration_errors():
            rules.check_reads_examples(
                "spinn_classifier",
                type(dataset_reader).__name__,
                hasattr(dataset_reader, "example_to_instance"),
            )

    def predict(self, sentence: str) -> JsonDict:
        """The output for one sentence (or ListOps expression)."""
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if not isinstance(json_dict, dict):
            raise ValueError(f"expected a JSON object, got {type(json_dict).__name__}")
        reader: Any = self._dataset_reader
        # `{"sentence": ...}`, as AllenNLP's text_classifier predictor takes it, for a reader
        # whose lines name the text otherwise ("text").
        text_key = getattr(reader, "text_key", "sentence")
        if text_key not in json_dict and "sentence" in json_dict:
            json_dict = {**json_dict, text_key: json_dict["sentence"]}
        instance = reader.example_to_instance(json_dict, use_label=True)
        # The gold label and tree go to the output through the metadata, not to the model.
        metadata = instance["metadata"].metadata
        label = instance.fields.pop("label", None)
        if label is not None:
            metadata["gold_label"] = label.label
        # A text line's parse (its metadata says "gold"), or any ListOps expression's tree.
        has_gold_tree = metadata.get("transitions_source") == "gold" or getattr(
            reader, "gives_gold_trees", False
        )
        if has_gold_tree and "transitions" in instance.fields:
            gold_transitions = instance["transitions"].tensor.tolist()
            metadata["gold_tree"] = readable_tree(metadata["tokens"], gold_transitions)
        return instance

    def _trim(self, output: Dict[str, Any]) -> Dict[str, Any]:
        metadata = output.pop("metadata", None) or {}
        output.pop("logits", None)
        if "transitions" in output:
            # The batch's padding is no part of this line's tree.
            steps = list(output["transitions"])
            while steps and steps[-1] == PAD:
                steps.pop()
            output["transitions"] = steps
        for key in ("gold_label", "gold_tree"):
            if key in metadata:
                output[key] = metadata[key]
        return output
