import json
import logging
from collections import defaultdict
from typing import Any, Dict, List, Optional, Tuple, Union

from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

from spinn_allennlp.data.dataset_readers import TreeDatasetReader
from spinn_allennlp.data.tree_sources import TreeSource

logger = logging.getLogger(__name__)


class UnreadableLine(dict):
    """What :meth:`SpinnNliPredictor.load_line` returns for a line that is not JSON: the line
    itself (``{"line": ...}``, so that `allennlp predict` can still print it) and why."""

    def __init__(self, line: str, error: str) -> None:
        super().__init__(line=line)
        self.error = error


@Predictor.register("spinn_nli")
class SpinnNliPredictor(Predictor):
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
    JSON, a field of the wrong type, an empty sentence, a parse that doesn't match its text, or
    anything the model fails on) gives `{"error": ..., "input": ...}` and the run goes on.
    (`allennlp predict` itself skips blank lines before they reach the predictor.)

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
            if not isinstance(dataset_reader, TreeDatasetReader):
                raise ConfigurationError(
                    f"tree_source needs a reader with trees, not {type(dataset_reader).__name__}"
                )
            dataset_reader.tree_source = tree_source_from(tree_source)

    def load_line(self, line: str) -> JsonDict:
        # AllenNLP's own load_line is json.loads: one truncated line would end the whole run.
        try:
            return json.loads(line)
        except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
            return UnreadableLine(line.rstrip("\r\n"), f"bad JSON: {error}")

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
            if isinstance(json_dict, UnreadableLine):
                logger.warning("input %d: %s", position, json_dict.error)
                results[position] = {"error": json_dict.error, "input": json_dict["line"]}
                continue
            instance = _instance_or_error(self._json_to_instance, json_dict)
            if isinstance(instance, Instance):
                instances.append(instance)
                good.append(position)
            else:
                logger.warning("input %d: %s", position, instance)
                results[position] = {"error": instance, "input": json_dict}
        for position, output in zip(good, self._predict_all(instances)):
            results[position] = output
            if "error" in output:
                output["input"] = inputs[position]
        return results

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self._predict_all([instance])[0]

    def _predict_all(self, instances: List[Instance]) -> List[JsonDict]:
        """Outputs of a list of instances, batched by their fields (lines with parses have
        transition fields, raw ones don't, and one batch needs one set of fields)."""
        groups: Dict[Tuple[str, ...], List[int]] = defaultdict(list)
        for position, instance in enumerate(instances):
            groups[tuple(sorted(instance.fields))].append(position)
        outputs: List[Any] = [None] * len(instances)
        for positions in groups.values():
            group = [instances[position] for position in positions]
            for position, output in zip(positions, self._predict_batch(group)):
                outputs[position] = output
        return outputs

    def _predict_batch(self, instances: List[Instance]) -> List[JsonDict]:
        """Outputs of one batch; if the batch fails, each instance alone, so that only the
        ones that fail by themselves get an error."""
        try:
            return [_trim(output) for output in self.predict_batch_instance(instances)]
        except Exception as error:
            if len(instances) == 1:
                logger.exception("prediction failed")
                return [{"error": f"prediction failed: {type(error).__name__}: {error}"}]
            logger.warning("a batch of %d failed (%s); one at a time", len(instances), error)
        return [self._predict_batch([instance])[0] for instance in instances]


def _instance_or_error(make_instance, json_dict: JsonDict) -> Any:
    """The instance, or the message saying why there is none."""
    try:
        return make_instance(json_dict)
    except (ValueError, TypeError, KeyError) as error:
        return str(error)
    except Exception as error:  # not a foreseen kind of bad input: keep the traceback
        logger.exception("unexpected error reading an input")
        return f"unexpected {type(error).__name__}: {error}"


def _trim(output: Dict[str, Any]) -> Dict[str, Any]:
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
