import json
import logging
from collections import defaultdict, deque
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

logger = logging.getLogger(__name__)


class UnreadableLine(dict):
    """What :meth:`LinePredictor.load_line` returns for a line that is not JSON: the line
    itself (``{"line": ...}``, so that `allennlp predict` can still print it) and why."""

    def __init__(self, line: str, error: str) -> None:
        super().__init__(line=line)
        self.error = error


def not_utf8(line: str) -> Optional[UnreadableLine]:
    """The error of a line that holds bytes that are not UTF-8, read with
    errors="surrogateescape" (as `allennlp predict` reads its file: each such byte became a
    lone surrogate U+DC80-U+DCFF), naming the first; None for a good line. The line is shown
    with U+FFFD in place of each bad byte."""
    escaped = [i for i, character in enumerate(line) if "\udc80" <= character <= "\udcff"]
    if not escaped:
        return None
    first = escaped[0]
    shown = "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in line)
    byte = ord(line[first]) - 0xDC00
    return UnreadableLine(
        shown.rstrip("\r\n"),
        f"not UTF-8: byte 0x{byte:02x} at character {first + 1} (save the file as UTF-8)",
    )


class LinePredictor(Predictor):
    """A `Predictor` that answers every input, in order: a line that is not JSON, an object its
    `_json_to_instance` refuses (`ValueError`, `TypeError`, `KeyError`), or an instance the
    model fails on gets `{"error": ..., "input": ...}`, and the others are predicted as usual.
    Instances are batched by their set of fields (e.g. lines with and without parses); a batch
    that fails is retried one instance at a time, so only the instances that fail alone get an
    error. Subclasses define `_json_to_instance` and may override `_trim` (what of the model's
    output to keep).

    A bad input is logged with its line number in the input file under `allennlp predict`
    (`line 7: bad JSON: ...`; see `predict_command.py`), and as `input <i>` of its batch when
    called from Python.
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        # The input file's line numbers of the lines loaded and not yet predicted, in order
        # (filled by `allennlp predict`, see predict_command.py).
        self.input_line_numbers: Deque[int] = deque()

    def load_line(self, line: str) -> JsonDict:
        # AllenNLP's own load_line is json.loads: one truncated line would end the whole run.
        undecodable = not_utf8(line)
        if undecodable is not None:
            return undecodable
        try:
            return json.loads(line)
        except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
            return UnreadableLine(line.rstrip("\r\n"), f"bad JSON: {error}")

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        results: List[Any] = [None] * len(inputs)
        good: List[int] = []
        instances: List[Instance] = []
        where = [self._where(position) for position in range(len(inputs))]
        for position, json_dict in enumerate(inputs):
            if isinstance(json_dict, UnreadableLine):
                logger.warning("%s: %s", where[position], json_dict.error)
                results[position] = {"error": json_dict.error, "input": json_dict["line"]}
                continue
            instance = instance_or_error(self._json_to_instance, json_dict)
            if isinstance(instance, Instance):
                instances.append(instance)
                good.append(position)
            else:
                logger.warning("%s: %s", where[position], instance)
                results[position] = {"error": instance, "input": json_dict}
        for position, output in zip(good, self._predict_all(instances)):
            results[position] = output
            if "error" in output:
                output["input"] = inputs[position]
        return results

    def _where(self, position: int) -> str:
        """How the log names the input at `position` of a batch: its line in the input file
        when `allennlp predict` said so, else its place in the batch."""
        if self.input_line_numbers:
            return f"line {self.input_line_numbers.popleft()}"
        return f"input {position}"

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self._predict_all([instance])[0]

    def _trim(self, output: Dict[str, Any]) -> Dict[str, Any]:
        return output

    def _predict_all(self, instances: List[Instance]) -> List[JsonDict]:
        """Outputs of a list of instances, batched by their fields (one batch needs one set of
        fields)."""
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
            return [self._trim(output) for output in self.predict_batch_instance(instances)]
        except Exception as error:
            if len(instances) == 1:
                logger.exception("prediction failed")
                return [{"error": f"prediction failed: {type(error).__name__}: {error}"}]
            logger.warning("a batch of %d failed (%s); one at a time", len(instances), error)
        return [self._predict_batch([instance])[0] for instance in instances]


def instance_or_error(make_instance: Callable[[JsonDict], Instance], json_dict: JsonDict) -> Any:
    """The instance, or the message saying why there is none."""
    try:
        return make_instance(json_dict)
    except (ValueError, TypeError, KeyError) as error:
        return str(error)
    except Exception as error:  # not a foreseen kind of bad input: keep the traceback
        logger.exception("unexpected error reading an input")
        return f"unexpected {type(error).__name__}: {error}"
