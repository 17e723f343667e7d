"""A base for readers of line-based corpora whose examples carry trees (or will get one)."""

import gzip
import json
import logging
from collections import Counter
from typing import Any, Dict, Iterable, Iterator, Optional, Sequence, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.common.util import is_distributed
from allennlp.data import DatasetReader, Instance, Tokenizer

from spinn_allennlp.data.dataset_readers.sentences import (  # noqa: F401 (re-exported: the readers import them from here)
    LEFT_PAD_TOKEN,
    LeftOutByLength,
    MalformedExampleError,
    Sentence,
    SentenceReading,
)
from spinn_allennlp.data.dataset_readers.shard_summaries import (
    MergedSummary,
    ShardedRead,
    ShardReport,
)
from spinn_allennlp.data.paths import resolve_data_path
from spinn_allennlp.data.tokenizers import PtbSpacyTokenizer
from spinn_allennlp.data.tree_sources import TreeSource

logger = logging.getLogger(__name__)


class TreeDatasetReader(SentenceReading, DatasetReader):
    """Reads a corpus with one example per line (JSON lines, PTB trees, TSV), plain or ``.gz``,
    where any line may be broken. Subclasses implement :meth:`line_to_instance`.

    * A line that raises :class:`MalformedExampleError` is logged as
      ``file:line: skipped: reason: detail``, counted in ``skipped`` (reason -> count) and
      skipped; nothing malformed stops an epoch. Any other exception from a line is skipped and
      counted the same way (reason "unexpected <ExceptionType>", logged with its traceback).
      Intentional drops (e.g. SNLI pairs without a gold label, examples over ``max_length``)
      are counted in ``dropped`` (through :meth:`drop`, :meth:`check_length`), not logged line
      by line. Each read resets both and ends with a one-line summary (a warning when
      something was skipped). A read cut short by ``max_instances`` says so in a warning, with
      the override that lifts it: an archive keeps its config's caps, so `allennlp evaluate`
      would otherwise score part of a file without a word.
    * Blank lines are ignored, a UTF-8 byte-order mark is removed, and invalid UTF-8 is a
      skipped line.
    * ``${VAR:-default}`` in a path is expanded from the environment (see ``data/paths.py``).
    * Lines are sharded across distributed and data-loader workers, so ``max_instances``
      counts lines read, skipped ones included. Each worker counts its own shard in
      ``skipped``/``dropped``; the summary is logged once per read, merged over all shards
      (see ``shard_summaries.py``): by the last data-loader worker to finish, or by the first
      distributed worker (the one whose log is on the console).

    Shared sentence handling for subclasses: :meth:`sentence_tokens_and_transitions` (tokens
    and gold transitions from a binary parse, checked against the sentence, or tokens of raw
    text), ``lowercase`` and the paper's crop/pad mode (:meth:`crop_pad`).

    # Parameters

    tokenizer : `Tokenizer`, optional (default = `PtbSpacyTokenizer()`)
        Splits raw sentences (those without a parse) into words.
    crop_pad_length : `int`, optional (default = `None`)
        The paper's fixed-length mode (§3.5): every sentence cropped or padded at the left to
        exactly this many tokens (pad token "@@LEFTPAD@@") and `2 * length - 1` transitions;
        a cropped tree stays a valid tree over the kept words. `None` keeps sentences whole.
        The padding words are never reduced (a stack of trees, the sentence's on top): an
        encoder that follows these trees takes the policy `{"type": "given", "left_padded":
        true}` (otherwise the trees are refused as forests).
    max_length : `int`, optional (default = `None`)
        Examples with a sentence of more tokens than this are left out (counted in `dropped`)
        when reading a file; `text_to_instance` does not apply it (a predictor should answer).
    lowercase : `bool`, optional (default = `False`)
    tree_source : `TreeSource`, optional (default = `None`)
        Where the tree of a sentence without a binary parse comes from (`"balanced"`,
        `"benepar"`, `"spinn"`, ...); a sentence it has no tree for skips the line (counted
        under the tree source's reason). `None`: such sentences get no transitions (the model
        decides: its own parser, or the encoder's default tree). Sentences with a binary parse
        always keep it.
    **kwargs
        Passed to `DatasetReader` (`max_instances`, ...).
    """

    def __init__(
        self,
        tokenizer: Optional[Tokenizer] = None,
        crop_pad_length: Optional[int] = None,
        max_length: Optional[int] = None,
        lowercase: bool = False,
        tree_source: Optional[TreeSource] = None,
        **kwargs,
    ) -> None:
        kwargs.setdefault("manual_distributed_sharding", True)
        kwargs.setdefault("manual_multiprocess_sharding", True)
        super().__init__(**kwargs)
        if crop_pad_length is not None and crop_pad_length < 1:
            raise ValueError(f"crop_pad_length must be at least 1, got {crop_pad_length}")
        if max_length is not None and max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        self._tokenizer = tokenizer or PtbSpacyTokenizer()
        self._crop_pad_length = crop_pad_length
        self._max_length = max_length
        self._lowercase = lowercase
        self.tree_source = tree_source
        self.skipped: Counter = Counter()
        self.dropped: Counter = Counter()

    # --- reading ------------------------------------------------------------------------

    def _read(self, file_path) -> Iterable[Instance]:
        self.skipped = Counter()
        self.dropped = Counter()
        num_instances = 0
        # "${SNLI_TRAIN:-data/...}" in the configs: bundled data unless a variable says otherwise
        # (and a missing file is an error that says which variable to set).
        file_path = resolve_data_path(file_path)
        local_path = cached_path(file_path)
        opener = gzip.open if str(local_path).endswith(".gz") else open
        shard, num_shards = self._shard()
        sharded_read = ShardedRead(file_path, shard, num_shards) if num_shards > 1 else None
        complete = False
        try:
            with opener(local_path, "rb") as data_file:
                for line_number, line in self.shard_iterable(enumerate(data_file, start=1)):
                    try:
                        instance = self._decode_and_read(line, line_number)
                    except MalformedExampleError as error:
                        self.skipped[error.reason] += 1
                        logger.warning("%s:%d: skipped: %s", file_path, line_number, error)
                        continue
                    except LeftOutByLength as error:
                        self.drop(error.reason)
                        continue
                    except Exception as error:
                        # A line no check foresaw (a bug in a reader, most likely): skipped and
                        # counted like a malformed one, with the traceback, rather than ending
                        # the epoch.
                        reason = f"unexpected {type(error).__name__}"
                        self.skipped[reason] += 1
                        logger.exception(
                            "%s:%d: skipped: %s: %s", file_path, line_number, reason, error
                        )
                        continue
                    if instance is None:
                        continue
                    num_instances += 1
                    yield instance
            complete = True
        finally:
            # Also when the consumer stops early (the generator is closed): the other shards'
            # summary waits for this one.
            self._summarize(file_path, sharded_read, num_instances, complete)
        if num_instances == 0 and sharded_read is None:
            # Rather than AllenNLP's "Found no field that needed padding" at the first batch.
            # (A shard of a file read in shards may be empty: the merged summary says it.)
            why = (
                "no line of it can be used (each skipped line is logged above as "
                "file:line: skipped: reason)"
                if self.skipped or self.dropped
                else "the file has no line but blank ones"
            )
            raise ConfigurationError(
                summary(file_path, num_instances, self.skipped, self.dropped) + ": " + why
            )

    def shard_iterable(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """This process's share of the lines, uncapped. AllenNLP 2.10's own also cuts the
        *lines* at ``max_instances`` (besides ``read()`` cutting the instances), so a cap of
        500 with 5 lines dropped or skipped gave 495 instances, and the read then ended as if
        the file had, without the warning that a cap stopped it. Here ``max_instances`` counts
        instances, as AllenNLP documents it, and a read it stops always says so."""
        cap, self.max_instances = self.max_instances, None
        try:
            return super().shard_iterable(iterable)
        finally:
            self.max_instances = cap

    def _shard(self) -> Tuple[int, int]:
        """(this process's shard, number of shards) of a read: as ``shard_iterable`` splits."""
        shard, num_shards = 0, 1
        if is_distributed():
            shard, num_shards = torch.distributed.get_rank(), torch.distributed.get_world_size()
        worker = self.get_worker_info()
        if worker is not None:
            shard = shard * worker.num_workers + worker.id
            num_shards *= worker.num_workers
        return shard, num_shards

    def _summarize(
        self,
        file_path: str,
        sharded_read: Optional[ShardedRead],
        num_instances: int,
        complete: bool,
    ) -> None:
        """One summary per read: this read's own, or, when the file is read in shards (by
        data-loader or distributed workers), the merged summary of every shard. A read that
        `max_instances` stopped early gets a warning (from one shard only)."""
        if not complete and self.max_instances is not None:
            if sharded_read is None or sharded_read.shard == 0:
                logger.warning(
                    "%s: stopped after %d instances: this reader's max_instances is %d. A "
                    "model archive keeps the caps of its config, so `allennlp evaluate` (and "
                    "`predict --use-dataset-reader`) read no further; to read the whole file, "
                    "set the reader's max_instances to null, e.g. --overrides "
                    "'{\"validation_dataset_reader.max_instances\": null}' (or "
                    '"dataset_reader.max_instances" where the config has no validation reader)',
                    file_path,
                    num_instances,
                    self.max_instances,
                )
        if sharded_read is None:
            if complete:
                self._log_summary(file_path, num_instances, self.skipped, self.dropped)
            return
        logger.debug(
            "%s: shard %d of %d: read %d instances; dropped %s; skipped %s",
            file_path,
            sharded_read.shard,
            sharded_read.num_shards,
            num_instances,
            dict(self.dropped),
            dict(self.skipped),
        )
        report = ShardReport(
            sharded_read.shard,
            sharded_read.num_shards,
            num_instances,
            dict(self.skipped),
            dict(self.dropped),
            complete,
        )

        def log(merged: MergedSummary) -> None:
            note = f" (merged from {merged.num_shards} shards"
            if merged.incomplete_shards:
                note += f"; shards {merged.incomplete_shards} stopped before their last line"
            self._log_summary(
                file_path, merged.instances, merged.skipped, merged.dropped, note + ")"
            )

        # Data-loader workers end with their shard: the last one merges. Distributed workers
        # outlive it, and only the first writes to the console: it merges.
        sharded_read.finish(
            report, log, merger="last" if self.get_worker_info() is not None else "shard 0"
        )

    def _decode_and_read(self, line: bytes, line_number: int) -> Optional[Instance]:
        try:
            text = line.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            raise MalformedExampleError("invalid UTF-8", str(error)) from error
        if line_number == 1:
            text = text.lstrip("\ufeff")
        if not text.strip():
            return None
        return self.line_to_instance(text, line_number)

    def line_to_instance(self, line: str, line_number: int) -> Optional[Instance]:
        """The instance of one non-blank line; None to drop it (after :meth:`drop`); raise
        :class:`MalformedExampleError` to skip it as malformed."""
        raise NotImplementedError

    def drop(self, reason: str) -> None:
        """Counts an intentionally dropped line (not an error) under ``reason``."""
        self.dropped[reason] += 1

    @staticmethod
    def _log_summary(
        file_path: str, num_instances: int, skipped: Counter, dropped: Counter, note: str = ""
    ) -> None:
        logger.log(
            logging.WARNING if skipped else logging.INFO,
            "%s",
            summary(file_path, num_instances, skipped, dropped) + note,
        )

    # --- sentences ----------------------------------------------------------------------


def summary(file_path: str, num_instances: int, skipped: Counter, dropped: Counter) -> str:
    """`file: read N instances; dropped D (reason: count, ...); skipped S malformed (...)`."""

    def listing(counter: Counter) -> str:
        reasons = ", ".join(f"{reason}: {count}" for reason, count in counter.most_common())
        return f" ({reasons})" if reasons else ""

    return (
        f"{file_path}: read {num_instances} instances; dropped {sum(dropped.values())}"
        f"{listing(dropped)}; skipped {sum(skipped.values())} malformed{listing(skipped)}"
    )


def parse_json_object(line: str) -> Dict[str, Any]:
    """One JSON object; :class:`MalformedExampleError` ("bad JSON") for anything else."""
    try:
        example = json.loads(line)
    except json.JSONDecodeError as error:
        raise MalformedExampleError("bad JSON", str(error)) from error
    except RecursionError as error:  # "[[[[..." nested deeper than Python's recursion limit
        raise MalformedExampleError("bad JSON", "nested too deeply") from error
    if not isinstance(example, dict):
        kind = type(example).__name__
        raise MalformedExampleError("bad JSON", f"expected an object, got {kind}")
    return example


def string_field(
    example: Dict[str, Any], keys: Sequence[str], required: bool = False
) -> Optional[str]:
    """The value of the first of ``keys`` present (and not null) in ``example``; a
    :class:`MalformedExampleError` if it is not a string, or if none is present and
    ``required``."""
    for key in keys:
        value = example.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            kind = type(value).__name__
            raise MalformedExampleError(
                "bad field", f"{key} must be a string, got {kind} {_shorten(value)}"
            )
        return value
    if required:
        raise MalformedExampleError("missing field", " or ".join(keys))
    return None


def _shorten(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."
