"""Tests of the SNLI transitions reader on real SNLI dev lines (fixtures/snli)."""

import json
import logging
from collections import Counter

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.data.dataset_readers.dataset_reader import WorkerInfo

from spinn_allennlp.data.dataset_readers import LEFT_PAD_TOKEN
from spinn_allennlp.data.tree_sources import RightBranchingTrees, TreeSource
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import (
    PAD,
    REDUCE,
    SHIFT,
    balanced_transitions,
    check_transitions,
    left_branching_transitions,
    right_branching_transitions,
)

FIXTURES = FIXTURES_ROOT / "pair_classification" / "snli"
SAMPLE = FIXTURES / "snli_sample.jsonl"
SAMPLE_GZ = FIXTURES / "snli_sample.jsonl.gz"
MALFORMED = FIXTURES / "malformed.jsonl"
RAW_PAIRS = FIXTURES / "raw_pairs.jsonl"
# Skips are logged by the base reader's module.
LOGGER = "spinn_allennlp.data.dataset_readers.tree_dataset_reader"

# snli_sample.jsonl: 30 verbatim dev lines, 2 of them gold_label "-".
NUM_SAMPLE_LINES = 30
NO_GOLD_PAIR_IDS = {"3184031654.jpg#0r1e", "4444092165.jpg#0r1e"}
S, R = SHIFT, REDUCE


def read(reader, path):
    return list(reader.read(str(path)))


def by_pair_id(instances):
    return {instance["metadata"]["pairID"]: instance for instance in instances}


def words(instance, field):
    return [token.text for token in instance[field].tokens]


def parse_words(binary_parse):
    # Independent of parse_to_transitions: a parse's words are its non-bracket symbols.
    return [symbol for symbol in binary_parse.split() if symbol not in ("(", ")")]


@pytest.fixture(scope="module")
def sample_instances():
    return read(SnliTransitionsReader(), SAMPLE)


def test_reads_every_labelled_sample_line(sample_instances):
    assert len(sample_instances) == NUM_SAMPLE_LINES - len(NO_GOLD_PAIR_IDS)
    for instance in sample_instances:
        assert instance["metadata"]["transitions_source"] == "gold"
        assert instance["label"].label in ("entailment", "neutral", "contradiction")
        for side in ("premise", "hypothesis"):
            tokens = words(instance, side)
            transitions = instance[f"{side}_transitions"].tensor.tolist()
            assert tokens == instance["metadata"][f"{side}_tokens"]
            assert len(transitions) == 2 * len(tokens) - 1
            check_transitions(transitions, len(tokens))


def test_tokens_are_the_parse_words(sample_instances):
    lines = [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()]
    instances = by_pair_id(sample_instances)
    for line in lines:
        if line["gold_label"] == "-":
            continue
        instance = instances[line["pairID"]]
        assert words(instance, "premise") == parse_words(line["sentence1_binary_parse"])
        assert words(instance, "hypothesis") == parse_words(line["sentence2_binary_parse"])


def test_known_line_exactly(sample_instances):
    # Dev line 2: "Two woman are holding packages."
    # parse ( ( Two woman ) ( ( are ( holding packages ) ) . ) )
    instance = by_pair_id(sample_instances)["4705552913.jpg#2r1e"]
    assert words(instance, "hypothesis") == ["Two", "woman", "are", "holding", "packages", "."]
    assert instance["hypothesis_transitions"].tensor.tolist() == [S, S, R, S, S, S, R, R, S, R, R]
    assert instance["hypothesis_transitions"].tensor.dtype == torch.long
    assert instance["label"].label == "entailment"


def test_ptb_escapes_and_odd_quotes_are_accepted(sample_instances):
    instances = by_pair_id(sample_instances)
    # "costume glasses (with attached eyebrows, ...)": brackets are -LRB- / -RRB- in the parse.
    assert {"-LRB-", "-RRB-"} <= set(words(instances["3169276423.jpg#0r1c"], "premise"))
    # 'the words "HELP ME"' -> `` HELP ME ''
    assert "``" in words(instances["4547258202.jpg#0r1c"], "hypothesis")
    # "beneath a'no child left behind'" -> "a ` no ... '"
    assert "`" in words(instances["3335965982.jpg#1r1n"], "premise")
    # "the child was happy`": the backtick stays a backtick.
    assert words(instances["2786219341.jpg#3r1n"], "hypothesis")[-1] == "`"


def test_two_word_sentences(sample_instances):
    instances = by_pair_id(sample_instances)
    baby = instances["3155601377.jpg#3r1c"]
    assert words(baby, "hypothesis") == ["A", "baby"]
    assert baby["hypothesis_transitions"].tensor.tolist() == [S, S, R]
    trucks = instances["2862481071.jpg#4r1n"]
    assert words(trucks, "premise") == ["Trucks", "racing"]


def test_gzip_gives_the_same_instances(sample_instances):
    gz_instances = read(SnliTransitionsReader(), SAMPLE_GZ)
    assert len(gz_instances) == len(sample_instances)
    for plain, gz in zip(sample_instances, gz_instances):
        assert plain["metadata"].metadata == gz["metadata"].metadata
        assert plain["label"].label == gz["label"].label
        for side in ("premise", "hypothesis"):
            assert words(plain, side) == words(gz, side)
            field = f"{side}_transitions"
            assert torch.equal(plain[field].tensor, gz[field].tensor)


def test_no_gold_label_lines_are_dropped_and_counted(sample_instances):
    reader = SnliTransitionsReader()
    instances = read(reader, SAMPLE)
    assert reader.num_no_gold_label == len(NO_GOLD_PAIR_IDS)
    assert reader.skipped == Counter()  # dropping "-" is not an error
    assert not NO_GOLD_PAIR_IDS & set(by_pair_id(instances))


# malformed.jsonl: real dev lines, damaged one way each; line number -> (reason, detail).
MALFORMED_LINES = {
    2: ("malformed parse", "premise parse: 1 unclosed '('"),
    3: ("malformed parse", "constituent with 3 children"),
    4: ("parse tokens don't match the sentence", "motorcycles"),
    5: ("missing field", "sentence2 or hypothesis"),
    6: ("bad JSON", "Unterminated string"),
    8: ("invalid UTF-8", "can't decode byte 0xff"),
    9: ("unknown label", "'maybe'"),
    10: ("malformed parse", "hypothesis parse: empty parse"),
    13: ("empty sentence", "premise is empty"),
    14: ("missing field", "sentence2_binary_parse or hypothesis_binary_parse"),
    15: ("bad field", "sentence2 must be a string, got int"),
}
MALFORMED_GOOD_PAIR_IDS = [
    "3948003394.jpg#1r1n",
    "530472459.jpg#4r1c",
    "3021028400.jpg#1r1e",
    "3021028400.jpg#1r1c",
]


def test_malformed_lines_are_skipped_and_counted():
    reader = SnliTransitionsReader()
    instances = read(reader, MALFORMED)
    # Good lines 1, 7, 16, 17; line 11 is gold "-", line 12 is blank.
    assert [instance["metadata"]["pairID"] for instance in instances] == MALFORMED_GOOD_PAIR_IDS
    assert reader.skipped == Counter(reason for reason, _ in MALFORMED_LINES.values())
    assert reader.num_no_gold_label == 1


@pytest.mark.parametrize("line_number", sorted(MALFORMED_LINES))
def test_malformed_line_is_logged_with_file_and_line(caplog, line_number):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    read(SnliTransitionsReader(), MALFORMED)
    reason, detail = MALFORMED_LINES[line_number]
    prefix = f"{MALFORMED}:{line_number}: skipped: {reason}"
    messages = [record.getMessage() for record in caplog.records if record.name == LOGGER]
    matching = [message for message in messages if message.startswith(prefix)]
    assert len(matching) == 1, messages
    assert detail in matching[0]


def test_summary_is_logged_once_per_read(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    reader = SnliTransitionsReader()
    read(reader, MALFORMED)
    read(reader, MALFORMED)
    messages = [record.getMessage() for record in caplog.records]
    summaries = [message for message in messages if message.startswith(f"{MALFORMED}: read ")]
    assert len(summaries) == 2
    assert summaries[0].startswith(f"{MALFORMED}: read 4 instances; dropped 1 (no gold label: 1)")
    assert "skipped 11 malformed" in summaries[0] and "malformed parse: 3" in summaries[0]
    # Counters are reset by each read, not accumulated.
    assert sum(reader.skipped.values()) == 11


def test_crop_pad_gives_the_papers_fixed_length(sample_instances):
    instances = read(SnliTransitionsReader(crop_pad_length=25), SAMPLE)
    assert len(instances) == len(sample_instances)
    originals = by_pair_id(sample_instances)
    for instance in instances:
        original = originals[instance["metadata"]["pairID"]]
        for side in ("premise", "hypothesis"):
            tokens = words(instance, side)
            transitions = instance[f"{side}_transitions"].tensor.tolist()
            assert len(tokens) == 25 and len(transitions) == 49
            full_tokens = words(original, side)
            if len(full_tokens) >= 25:
                # Cropped at the left and still one valid tree over the last 25 words.
                assert tokens == full_tokens[-25:]
                check_transitions(transitions, 25)
            else:
                num_pad = 25 - len(full_tokens)
                assert tokens == [LEFT_PAD_TOKEN] * num_pad + full_tokens
                full_transitions = original[f"{side}_transitions"].tensor.tolist()
                assert transitions == [S] * num_pad + full_transitions + [PAD] * num_pad
            # Metadata tokens line up with the transitions.
            assert instance["metadata"][f"{side}_tokens"] == tokens
    # The sample has a 59-word premise: cropping really happened.
    assert max(len(words(i, "premise")) for i in sample_instances) == 59


def test_max_length_leaves_long_pairs_out_without_cropping():
    reader = SnliTransitionsReader(max_length=35)
    instances = read(reader, SAMPLE)
    # Premises of 40 and 59 words (the 40-word one also appears with gold "-": dropped first).
    assert reader.dropped["over max_length 35"] == 2 and not reader.skipped
    assert len(instances) == NUM_SAMPLE_LINES - len(NO_GOLD_PAIR_IDS) - 2
    assert all(len(words(i, side)) <= 35 for i in instances for side in ("premise", "hypothesis"))


def test_max_length_counts_words_before_cropping():
    reader = SnliTransitionsReader(max_length=35, crop_pad_length=10)
    instances = read(reader, SAMPLE)
    assert reader.dropped["over max_length 35"] == 2 and not reader.skipped
    assert all(len(words(i, "premise")) == 10 for i in instances)


def test_text_to_instance_ignores_max_length():
    # A predictor must answer for long sentences too.
    reader = SnliTransitionsReader(max_length=2)
    instance = reader.text_to_instance("The cat sat", "A cat", "( ( The cat ) sat )", "( A cat )")
    assert words(instance, "premise") == ["The", "cat", "sat"]


def test_raw_pairs_have_no_transitions():
    reader = SnliTransitionsReader()
    instances = read(reader, RAW_PAIRS)
    assert len(instances) == 4
    assert reader.skipped == Counter()
    for instance in instances:
        # Empty transitions fields: the model decides the trees.
        assert set(instance.fields) == {
            "premise",
            "hypothesis",
            "premise_transitions",
            "hypothesis_transitions",
            "metadata",
        }
        for side in ("premise", "hypothesis"):
            assert instance[f"{side}_transitions"].tensor.tolist() == []
        assert instance["metadata"]["transitions_source"] == "none"
    # Tokenized like SNLI's parses: hyphenated words whole, PTB quotes and brackets.
    assert words(instances[0], "premise")[5:8] == ["an", "Asian-themed", "area"]
    assert words(instances[1], "hypothesis")[2:] == ["saying", "``", "cheese", "''", "."]
    assert words(instances[2], "premise")[-7:-3] == ["-LRB-", "soccer", "-RRB-", "in"]
    assert words(instances[3], "hypothesis") == ["A", "baby"]


@pytest.mark.parametrize(
    "source, transitions_of",
    [
        ("balanced", balanced_transitions),
        ("left_branching", left_branching_transitions),
        ("right_branching", right_branching_transitions),
    ],
)
def test_raw_pairs_get_the_tree_sources_trees(source, transitions_of):
    reader = DatasetReader.from_params(
        Params({"type": "snli_transitions", "tree_source": {"type": source}})
    )
    instances = read(reader, RAW_PAIRS)
    assert len(instances) == 4 and reader.skipped == Counter()
    for instance in instances:
        assert instance["metadata"]["transitions_source"] == source
        for side in ("premise", "hypothesis"):
            given = instance[f"{side}_transitions"].tensor.tolist()
            assert given == transitions_of(len(words(instance, side)))


def test_parsed_lines_keep_their_gold_trees_with_a_tree_source(sample_instances):
    reader = SnliTransitionsReader(tree_source=RightBranchingTrees())
    with_source = read(reader, SAMPLE)
    assert len(with_source) == len(sample_instances)
    for ours, gold in zip(with_source, sample_instances):
        assert ours["metadata"]["transitions_source"] == "gold"
        assert torch.equal(ours["premise_transitions"].tensor, gold["premise_transitions"].tensor)


class BrokenTrees(TreeSource):
    """A tree source that gets one sentence wrong (too few REDUCEs for 3+ words)."""

    name = "broken"

    def transitions(self, tokens):
        return [SHIFT] * len(tokens) if len(tokens) > 2 else balanced_transitions(len(tokens))


def test_invalid_trees_from_a_tree_source_are_skipped_and_counted(caplog):
    reader = SnliTransitionsReader(tree_source=BrokenTrees())
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        with pytest.raises(ConfigurationError, match="read 0 instances"):
            read(reader, RAW_PAIRS)
    assert reader.skipped == Counter({"invalid tree from the tree source": 4})
    assert "raw_pairs.jsonl:1: skipped: invalid tree from the tree source: broken gave" in (
        caplog.text
    )


def test_crop_pad_applies_to_raw_pairs_too():
    instances = read(SnliTransitionsReader(crop_pad_length=5), RAW_PAIRS)
    assert words(instances[3], "hypothesis") == [LEFT_PAD_TOKEN] * 3 + ["A", "baby"]
    assert words(instances[1], "hypothesis") == ["saying", "``", "cheese", "''", "."]


@pytest.mark.parametrize(
    "premise_parse, hypothesis_parse, label, message",
    [
        ("( ( The cat ) sat", "( A cat )", None, "malformed parse: premise parse: 1 unclosed '('"),
        ("( The cat sat )", "( A cat )", None, "constituent with 3 children"),
        ("( ( The dog ) sat )", "( A cat )", None, "parse tokens don't match the sentence"),
        ("( ( The cat ) sat )", "( A cat )", "maybe", "unknown label: 'maybe'"),
        ("( ( The cat ) sat )", None, None, "give both binary parses or neither"),
    ],
)
def test_text_to_instance_rejects_malformed_input(premise_parse, hypothesis_parse, label, message):
    reader = SnliTransitionsReader()
    with pytest.raises(ValueError) as error:
        reader.text_to_instance("The cat sat", "A cat", premise_parse, hypothesis_parse, label)
    assert message in str(error.value)


def test_text_to_instance_accepts_token_lists_and_raw_text():
    reader = SnliTransitionsReader()
    instance = reader.text_to_instance(
        ["The", "cat", "(", "Tom", ")", "sat"],
        "A cat.",
        "( ( The ( cat ( -LRB- ( Tom -RRB- ) ) ) ) sat )",
        "( ( A cat ) . )",
        label="entailment",
        pair_id="x1",
    )
    assert words(instance, "premise") == ["The", "cat", "-LRB-", "Tom", "-RRB-", "sat"]
    assert instance["hypothesis_transitions"].tensor.tolist() == [S, S, R, S, R]
    assert instance["metadata"]["pairID"] == "x1"

    raw = reader.text_to_instance("The cat sat.", "A cat")
    assert words(raw, "premise") == ["The", "cat", "sat", "."]
    # No tree: an empty transitions field (so raw and parsed lines can share a batch).
    assert raw["premise_transitions"].tensor.tolist() == [] and "label" not in raw.fields
    assert "pairID" not in raw["metadata"].metadata


def test_lowercase(sample_instances):
    instances = read(SnliTransitionsReader(lowercase=True), SAMPLE)
    originals = by_pair_id(sample_instances)
    for instance in instances:
        original = originals[instance["metadata"]["pairID"]]
        for side in ("premise", "hypothesis"):
            assert words(instance, side) == [word.lower() for word in words(original, side)]
            assert instance["metadata"][f"{side}_tokens"] == words(instance, side)
            field = f"{side}_transitions"
            assert torch.equal(instance[field].tensor, original[field].tensor)
    assert "-lrb-" in words(by_pair_id(instances)["3169276423.jpg#0r1c"], "premise")


def test_batches_pad_transitions_with_minus_one(sample_instances):
    vocab = Vocabulary.from_instances(sample_instances)
    batch = Batch(sample_instances[:3])  # 9-, 6- and 7-word hypotheses
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    transitions = tensors["hypothesis_transitions"]
    lengths = [2 * len(words(i, "hypothesis")) - 1 for i in sample_instances[:3]]
    assert transitions.shape == (3, max(lengths))
    for row, length in zip(transitions.tolist(), lengths):
        assert row[length:] == [PAD] * (max(lengths) - length)
        assert PAD not in row[:length]
    assert tensors["premise"]["tokens"]["tokens"].shape[0] == 3
    label_ids = [vocab.get_token_index(i["label"].label, "labels") for i in sample_instances[:3]]
    assert tensors["label"].tolist() == label_ids


def test_registered_and_constructible_from_params():
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "snli_transitions",
                "crop_pad_length": 25,
                "lowercase": True,
                "max_instances": 5,
            }
        )
    )
    assert isinstance(reader, SnliTransitionsReader)
    instances = read(reader, SAMPLE)
    assert len(instances) == 5  # the sample's first 5 lines are all labelled
    assert len(instances[0]["premise"].tokens) == 25


def test_worker_shards_are_disjoint_and_complete(sample_instances):
    shards = []
    for worker_id in range(2):
        reader = SnliTransitionsReader()
        reader._set_worker_info(WorkerInfo(num_workers=2, id=worker_id))
        shards.append([i["metadata"]["pairID"] for i in reader.read(str(SAMPLE))])
    assert not set(shards[0]) & set(shards[1])
    assert sorted(shards[0] + shards[1]) == sorted(by_pair_id(sample_instances))


def test_multiprocess_loader_reads_every_instance_once(sample_instances):
    # Worker processes shard the lines; token indexers are applied in the main process.
    loader = MultiProcessDataLoader(
        SnliTransitionsReader(), str(SAMPLE), batch_size=4, num_workers=2
    )
    loader.index_with(Vocabulary.from_instances(sample_instances))
    batches = list(loader)
    assert sum(batch["premise_transitions"].shape[0] for batch in batches) == len(sample_instances)
    pair_ids = [metadata["pairID"] for batch in batches for metadata in batch["metadata"]]
    assert sorted(pair_ids) == sorted(by_pair_id(sample_instances))
