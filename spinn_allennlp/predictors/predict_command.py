"""Line numbers and one output per line for `allennlp predict`.

AllenNLP 2.10's `allennlp predict` drops the blank lines of the input file before a predictor
sees its lines (in the command's private `_PredictManager`), so no predictor can know where in
the file an input came from, and the output file is no longer line by line the input's. When
the plugin is loaded by the command line with the predict command already imported (`allennlp
predict ... --include-package spinn_allennlp`, or through `.allennlp_plugins`),
`number_input_lines` gives that command a manager that tells our predictors (`LinePredictor`)
each input's 1-based line number before reading the line, and hands them blank lines too, which
they answer with `{"error": "blank line", ...}`: output line k answers input line k. Nothing
else changes: other predictors get their lines as before. This is the one place the plugin
reaches into AllenNLP's internals (AllenNLP is archived at 2.10.1; the suite's `allennlp
predict` run fails if this stops working).
"""

import sys
from typing import Any, Iterator

from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.common.util import JsonDict

from spinn_allennlp.predictors.line_predictor import LinePredictor, UnreadableLine

PREDICT_COMMAND = "allennlp.commands.predict"


def number_input_lines() -> bool:
    """Makes a loaded `allennlp predict` number its input lines for `LinePredictor`s; whether
    it did (False when the predict command is not loaded: the Python API, the demo)."""
    command = sys.modules.get(PREDICT_COMMAND)
    if command is None:
        return False
    manager = command._PredictManager
    if getattr(manager, "numbers_input_lines", False):
        return True

    class NumberingPredictManager(manager):  # type: ignore[misc, valid-type]
        numbers_input_lines = True

        def _get_json_data(self) -> Iterator[JsonDict]:
            predictor: Any = self._predictor
            if not isinstance(predictor, LinePredictor):
                yield from super()._get_json_data()
                return
            if self._input_file == "-":
                yield from numbered(predictor, sys.stdin)
            else:
                with open_compressed(cached_path(self._input_file)) as lines:
                    yield from numbered(predictor, lines)

    setattr(command, "_PredictManager", NumberingPredictManager)  # noqa: B010
    return True


def numbered(predictor: LinePredictor, lines: Any) -> Iterator[JsonDict]:
    """`load_line` of each line, the predictor told its line number first; a blank line (which
    AllenNLP's command drops) is an unreadable one, so that it gets its error in its place."""
    for number, line in enumerate(lines, start=1):
        predictor.input_line_numbers.append(number)
        if line.isspace():
            yield UnreadableLine(line.rstrip("\r\n"), "blank line")
        else:
            yield predictor.load_line(line)
