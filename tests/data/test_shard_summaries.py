"""One merged summary per read when a file is read in shards by several processes."""

import logging
import re
import time
from collections import Counter

from allennlp.data.data_loaders import MultiProcessDataLoader

from spinn_allennlp.data.dataset_readers.shard_summaries import (
    MergedSummary,
    ShardedRead,
    ShardReport,
)
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT

MALFORMED = FIXTURES_ROOT / "pair_classification" / "snli" / "malformed.jsonl"
LOGGER = "spinn_allennlp.data.dataset_readers.tree_dataset_reader"


def test_reports_of_one_read_are_merged_once_whatever_the_order(tmp_path):
    logged = []
    reads = [ShardedRead("corpus.jsonl", shard, 3, directory=tmp_path) for shard in (2, 0, 1)]
    for read, instances in zip(reads, (5, 7, 6)):
        read.finish(
            ShardReport(read.shard, 3, instances, {"bad JSON": read.shard}, {"no gold": 1}),
            logged.append,
        )
    assert len(logged) == 1
    merged = logged[0]
    assert isinstance(merged, MergedSummary)
    assert (merged.num_shards, merged.instances) == (3, 18)
    assert merged.skipped == Counter({"bad JSON": 3}) and merged.dropped == Counter({"no gold": 3})
    assert merged.incomplete_shards == []


def test_a_shard_killed_mid_read_leaves_later_reads_paired(tmp_path):
    logged = []

    def read_once(killed=None, incomplete=None):
        reads = [ShardedRead("corpus.jsonl", shard, 2, directory=tmp_path) for shard in (0, 1)]
        for read in reads:
            if read.shard != killed:
                complete = read.shard != incomplete
                report = ShardReport(read.shard, 2, 10 + read.shard, complete=complete)
                read.finish(report, logged.append)

    read_once()
    read_once(killed=1)  # started, never reported: this read gets no summary
    read_once(incomplete=0)  # closed early: reported as such
    read_once()
    assert [m.instances for m in logged] == [21, 21, 21]
    assert [m.incomplete_shards for m in logged] == [[], [0], []]


def test_shard_0_merges_late_reports_in_the_background(tmp_path):
    logged = []
    first, second = (ShardedRead("corpus.jsonl", shard, 2, directory=tmp_path) for shard in (0, 1))
    first.finish(ShardReport(0, 2, 3), logged.append, merger="shard 0")
    assert logged == []
    second.finish(ShardReport(1, 2, 4), logged.append, merger="shard 0")  # shard 1: no log
    for _ in range(100):
        if logged:
            break
        time.sleep(0.05)
    assert [m.instances for m in logged] == [7]


def test_data_loader_workers_log_one_merged_summary_per_read(tmp_path):
    """Two forked workers read alternate lines of the malformed fixture; their log lines go
    to one file (the handler is inherited), as they go to one console in a real run."""
    alone = SnliTransitionsReader()
    expected_instances = len(list(alone.read(MALFORMED)))
    log_file = tmp_path / "log.txt"
    handler = logging.FileHandler(log_file)
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    previous_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        for _ in range(2):  # two reads (a loader keeps what it read, so two loaders)
            loader = MultiProcessDataLoader(
                SnliTransitionsReader(), str(MALFORMED), batch_size=4, num_workers=2
            )
            assert len(list(loader.iter_instances())) == expected_instances
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous_level)
        handler.close()
    lines = log_file.read_text().splitlines()
    summaries = [line for line in lines if "instances; dropped" in line]
    assert len(summaries) == 2, lines
    for summary in summaries:
        assert summary.endswith("(merged from 2 shards)")
        assert f"read {expected_instances} instances" in summary
        assert f"dropped {sum(alone.dropped.values())} " in summary
        skipped = int(re.search(r"skipped (\d+) malformed", summary).group(1))
        assert skipped == sum(alone.skipped.values())
        for reason, count in alone.skipped.items():
            assert f"{reason}: {count}" in summary
    # Each malformed line is logged once per read, by the worker that read it.
    per_line = [line for line in lines if ": skipped: " in line]
    assert len(per_line) == 2 * sum(alone.skipped.values())
