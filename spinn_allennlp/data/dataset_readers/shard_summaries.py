"""One summary of a read that several processes share.

With data-loader workers or distributed training, each process reads one shard of a file
(every k-th line) and knows only its own skips. Here each shard, when it finishes, leaves a
small JSON report in a directory all processes of the run share; the reports of one read are
merged into one summary when the last one is in.

Which reports belong together: a *run* is the process tree below the first process that
imported this module (an environment variable, set then, is inherited by every worker); a
*read* is one pass over one file by all its shards, numbered per shard in the order the shard
makes them (every shard reads each file the same number of times: once per epoch, plus the
vocabulary pass). The run's directory is removed when the first process exits.
"""

import atexit
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

SESSION_VARIABLE = "SPINN_ALLENNLP_READ_SESSION"


def _run_directory() -> Path:
    session = os.environ.get(SESSION_VARIABLE)
    root = Path(tempfile.gettempdir()) / "spinn_allennlp_reads"
    if session is None:
        # The first process of the run (workers inherit the variable): it owns the directory.
        session = f"{os.getpid()}-{os.urandom(6).hex()}"
        os.environ[SESSION_VARIABLE] = session
        atexit.register(shutil.rmtree, root / session, True)
    return root / session


# Set at import, in the parent, so that forked and spawned workers inherit it.
RUN_DIRECTORY = _run_directory()


@dataclass
class ShardReport:
    shard: int
    num_shards: int
    instances: int = 0
    skipped: Dict[str, int] = field(default_factory=dict)
    dropped: Dict[str, int] = field(default_factory=dict)
    # False when the shard's reader was closed before its last line (e.g. a distributed
    # worker stopped early because another ran out of data).
    complete: bool = True


@dataclass
class MergedSummary:
    num_shards: int
    instances: int
    skipped: Counter
    dropped: Counter
    incomplete_shards: List[int]


def merge(reports: List[ShardReport]) -> MergedSummary:
    skipped: Counter = Counter()
    dropped: Counter = Counter()
    for report in reports:
        skipped.update(report.skipped)
        dropped.update(report.dropped)
    return MergedSummary(
        num_shards=len(reports),
        instances=sum(report.instances for report in reports),
        skipped=skipped,
        dropped=dropped,
        incomplete_shards=[report.shard for report in reports if not report.complete],
    )


class ShardedRead:
    """One shard's part in one read of ``file_path`` by ``num_shards`` shards.

    Made when the shard starts reading: it claims the shard's next read number then (a worker
    killed mid-read has claimed its number, so later reads stay paired; the killed read never
    gets a summary). :meth:`finish` leaves the shard's report."""

    def __init__(
        self, file_path: str, shard: int, num_shards: int, directory: Optional[Path] = None
    ) -> None:
        self.file_path = file_path
        self.shard = shard
        self.num_shards = num_shards
        self.directory = Path(directory or RUN_DIRECTORY)
        self.directory.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha1(f"{os.path.abspath(file_path)}|{num_shards}".encode())
        key = digest.hexdigest()[:16]
        number = 0
        while True:
            try:
                claim = self.directory / f"{key}.{number}.{shard}.claim"
                os.close(os.open(claim, os.O_CREAT | os.O_EXCL))
                break
            except FileExistsError:
                number += 1
        self.prefix = f"{key}.{number}"

    def finish(
        self,
        report: ShardReport,
        log: Callable[[MergedSummary], None],
        merger: str = "last",
        wait_seconds: float = 3600.0,
    ) -> None:
        """Leaves ``report``; ``log`` is called once, in one of the processes, with the merged
        summary when every shard's report is in.

        ``merger``: ``"last"`` = whichever shard completes the set merges (data-loader workers:
        processes that end with their shard and share the parent's output); ``"shard 0"`` =
        only shard 0 merges, waiting for late shards in a background thread (distributed
        workers: long-lived processes, of which only the first writes to the console)."""
        if merger not in ("last", "shard 0"):
            raise ValueError(f"merger must be 'last' or 'shard 0', got {merger!r}")
        temporary = self.directory / f"{self.prefix}.{self.shard}.tmp"
        temporary.write_text(json.dumps(asdict(report)))
        os.replace(temporary, self.directory / f"{self.prefix}.{self.shard}.json")
        if merger == "last":
            self._try_merge(log)
        elif self.shard == 0 and not self._try_merge(log):

            def wait() -> None:
                deadline = time.monotonic() + wait_seconds
                while (
                    time.monotonic() < deadline
                    and self.directory.exists()
                    and not self._try_merge(log)
                ):
                    time.sleep(0.2)

            threading.Thread(target=wait, name=f"merge {self.prefix}", daemon=True).start()

    def _try_merge(self, log: Callable[[MergedSummary], None]) -> bool:
        """Whether the set is complete; logs it if this is the first process to see that."""
        paths = sorted(self.directory.glob(f"{self.prefix}.*.json"))
        if len(paths) < self.num_shards:
            return False
        try:  # exactly one process logs
            os.close(os.open(self.directory / f"{self.prefix}.merged", os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return True
        log(merge([ShardReport(**json.loads(path.read_text())) for path in paths]))
        return True
