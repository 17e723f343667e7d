"""The corpus's own binary parses as a tree source."""

import gzip
import json
import logging
from collections import Counter
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from allennlp.common.file_utils import cached_path

from spinn_allennlp.data.paths import expand_path
from spinn_allennlp.data.tree_sources.tree_source import TreeSource, TreeSourceError
from spinn_core.transitions import MalformedParseError, parse_to_transitions

logger = logging.getLogger(__name__)


@TreeSource.register("gold")
class GoldTrees(TreeSource):
    """The gold binary parse: what a corpus line's `*_binary_parse` field gives.

    In a reader, a line with binary parses always gets them (with any tree source); naming
    `"gold"` as the reader's or predictor's tree source says that a sentence *without* one has
    no tree either: the line is skipped (counted) or, in a predictor, answered with an error,
    rather than given another source's tree. With `parse_files`, the gold parses of those files
    are looked up by the sentence's tokens, so raw text that is a sentence of the corpus gets
    the corpus's tree (e.g. to put gold trees on a predictions file that lost its parses).

    Registered as a `TreeSource` with name "gold".

    # Parameters

    parse_files : `List[str]`, optional (default = `None`)
        Files (plain or `.gz`, `${VAR:-default}` expanded) of JSON lines, whose fields ending
        in `binary_parse` (`sentence1_binary_parse`, `premise_binary_parse`, ...) are read, or
        of one bracketed binary parse per line. Malformed parses are logged with file:line and
        counted in `skipped`.
    """

    name = "gold"

    def __init__(self, parse_files: Optional[List[str]] = None) -> None:
        self.table: Dict[Tuple[str, ...], List[int]] = {}
        self.skipped: Counter = Counter()
        for path in parse_files or ():
            for location, parse in _parses(expand_path(path)):
                try:
                    tokens, transitions = parse_to_transitions(parse)
                except MalformedParseError as error:
                    self.skipped["malformed parse"] += 1
                    logger.warning("%s: skipped: malformed parse: %s", location, error)
                    continue
                self.table.setdefault(tuple(tokens), transitions)

    def transitions(self, tokens: Sequence[str]) -> List[int]:
        if not tokens:
            return []
        transitions = self.table.get(tuple(tokens))
        if transitions is None:
            raise TreeSourceError(
                "no gold tree: the line has no binary parse"
                + (" and the sentence is not in the gold parse files" if self.table else "")
            )
        return list(transitions)


def _parses(path: str) -> Iterator[Tuple[str, str]]:
    """(file:line, binary parse) of every parse in a file."""
    local_path = str(cached_path(path))
    opener = gzip.open if local_path.endswith(".gz") else open
    with opener(local_path, "rt", encoding="utf-8") as lines:
        for line_number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line:
                continue
            location = f"{path}:{line_number}"
            if not line.startswith("{"):
                yield location, line
                continue
            try:
                example = json.loads(line)
            except json.JSONDecodeError as error:
                logger.warning("%s: skipped: bad JSON: %s", location, error)
                continue
            for key, value in example.items() if isinstance(example, dict) else ():
                if key.endswith("binary_parse") and isinstance(value, str):
                    yield location, value
