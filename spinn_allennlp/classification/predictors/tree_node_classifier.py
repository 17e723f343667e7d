import logging
from typing import Any, Dict

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors import Predictor

from spinn_allennlp.data.labeled_trees import (
    MalformedTreeError,
    binary_tree_steps,
    parse_labeled_tree,
)
from spinn_allennlp.predictors import LinePredictor

logger = logging.getLogger(__name__)


@Predictor.register("tree_node_classifier")
class TreeNodeClassifierPredictor(LinePredictor):
    """Labels a sentence and every node of its tree, for JSON lines of raw text,
    `{"sentence": "A gorgeous , witty film ."}`, of tokens, `{"tokens": ["A", ...]}`, or of an
    SST-format tree, `{"tree": "(3 (2 A) (4 ...))"}` (its labels are ignored; its brackets are
    the tree).

    Raw text is tokenized by the reader's tokenizer and gets its tree from the reader's
    `tree_source` (`"transitions_source"` in the output names it); a model with its own parser (full
    SPINN) parses it itself. Output per line: `label`, `label_probs`, and for tree models
    `labeled_tree` (SST's format with the predicted classes, by number), `tree` (the brackets)
    and `nodes` (each node's phrase and label) — or, over dependency trees, each word with its
    head and label. A line that can't be used gives `{"error": ..., "input": ...}` and the run
    goes on.

    Registered as a `Predictor` with name "tree_node_classifier".
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if not isinstance(json_dict, dict):
            raise ValueError(f"expected a JSON object, got {type(json_dict).__name__}")
        reader = self._dataset_reader
        if "tree" in json_dict:
            try:
                tokens, transitions, _ = binary_tree_steps(
                    parse_labeled_tree(str(json_dict["tree"]))
                )
            except MalformedTreeError as error:
                raise ValueError(str(error)) from error
            return reader.text_to_instance(tokens, transitions)
        for key in ("sentence", "tokens"):
            if key in json_dict:
                return reader.text_to_instance(json_dict[key])
        raise ValueError('expected "sentence", "tokens" or "tree"')

    def _trim(self, output: Dict[str, Any]) -> Dict[str, Any]:
        for key in ("metadata", "logits", "node_logits", "transitions"):
            output.pop(key, None)
        return output
