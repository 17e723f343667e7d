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

import io
import json
import logging
import sys
from typing import Any, Callable, Iterator, List

from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.common.util import JsonDict

from spinn_allennlp.predictors.line_predictor import LinePredictor, UnreadableLine

logger = logging.getLogger(__name__)

PREDICT_COMMAND = "allennlp.commands.predict"
# The commands that read a file with an archive's dataset reader, and whose reads must not
# stop at the cap that reader had in training.
ARCHIVE_READING_COMMANDS = (PREDICT_COMMAND, "allennlp.commands.evaluate")


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
            # Bytes that are not UTF-8 are kept (as lone surrogates, errors="surrogateescape")
            # so that their line, and only it, gets an error: strict decoding would end the
            # run, the lines before it unanswered.
            if self._input_file == "-":
                stdin = io.TextIOWrapper(
                    sys.stdin.buffer, encoding="utf-8", errors="surrogateescape"
                )
                yield from numbered(predictor, stdin)
            else:
                path = cached_path(self._input_file)
                with open_compressed(path, errors="surrogateescape") as lines:
                    yield from numbered(predictor, lines)

    setattr(command, "_PredictManager", NumberingPredictManager)  # noqa: B010
    return True


def numbered(predictor: LinePredictor, lines: Any) -> Iterator[JsonDict]:
    """`load_line` of each line, the predictor told its line number first; a blank line (which
    AllenNLP's command drops) is an unreadable one, so that it gets its error in its place (as
    `load_line` gives one to a line with bytes that are not UTF-8)."""
    for number, line in enumerate(lines, start=1):
        predictor.input_line_numbers.append(number)
        if line.isspace():
            yield UnreadableLine(line.rstrip("\r\n"), "blank line")
        else:
            yield predictor.load_line(line)


def read_whole_files_with_archives() -> List[str]:
    """Makes the loaded `allennlp evaluate` and `allennlp predict` read their input files whole,
    whatever `max_instances` the archive's dataset readers had in training (an archive keeps
    its config's readers, caps included: `allennlp evaluate` after a smoke run capped at 500
    scored 495 of 9,824 test pairs, saying nothing). A cap the command's own `--overrides`
    sets (any key naming `max_instances`) is kept. Returns the commands changed (none when
    neither is loaded: the Python API's `load_archive` is left as it is)."""
    changed = []
    for name in ARCHIVE_READING_COMMANDS:
        command = sys.modules.get(name)
        if command is None:
            continue
        load = command.load_archive
        if not getattr(load, "reads_whole_files", False):
            setattr(command, "load_archive", _uncapped(load))  # noqa: B010
        changed.append(name)
    return changed


def _uncapped(load_archive: Callable[..., Any]) -> Callable[..., Any]:
    def load(archive_file: Any, *args: Any, **kwargs: Any) -> Any:
        archive = load_archive(archive_file, *args, **kwargs)
        overrides = kwargs.get("overrides", "")
        if "max_instances" in (overrides if isinstance(overrides, str) else json.dumps(overrides)):
            return archive
        for role in ("dataset_reader", "validation_dataset_reader"):
            reader = getattr(archive, role, None)
            if reader is not None and reader.max_instances is not None:
                logger.info(
                    "the archive's %s was capped at max_instances %d in training: reading the "
                    "whole input (to cap it, --overrides '{\"%s.max_instances\": N}')",
                    role,
                    reader.max_instances,
                    role,
                )
                reader.max_instances = None
        return archive

    setattr(load, "reads_whole_files", True)  # noqa: B010
    return load
