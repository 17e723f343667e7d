"""The base reader's line handling and accounting, through a minimal subclass."""

import gzip
import logging
from collections import Counter

import pytest
from allennlp.common.checks import ConfigurationError
from allennlp.data import Instance
from allennlp.data.fields import LabelField, TextField
from allennlp.data.tokenizers import Token

from spinn_allennlp.classification.dataset_readers import ListOpsReader
from spinn_allennlp.data.dataset_readers import (
    LEFT_PAD_TOKEN,
    MalformedExampleError,
    TreeDatasetReader,
    parse_json_object,
    string_field,
)
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import SHIFT

LOGGER = "spinn_allennlp.data.dataset_readers.tree_dataset_reader"


class TabSeparatedTrees(TreeDatasetReader):
    """label<TAB>binary parse, or label<TAB>"raw:" text; "skip" labels are dropped."""

    def line_to_instance(self, line, line_number):
        label, _, rest = line.partition("\t")
        if label == "skip":
            self.drop("unwanted")
            return None
        if not rest:
            raise MalformedExampleError("missing column", "no tab")
        if rest.startswith("raw:"):
            tokens, transitions = self.sentence_tokens_and_transitions("text", rest[4:])
        else:
            words = [w for w in rest.split() if w not in "()"]
            tokens, transitions = self.sentence_tokens_and_transitions("text", words, rest)
        self.check_length("text", tokens)
        tokens, transitions = self.crop_pad(tokens, transitions)
        return Instance({"text": TextField([Token(t) for t in tokens]), "label": LabelField(label)})


LINES = [
    "\ufeffpos\t( ( a good ) film )",  # BOM on the first line
    "",
    "neg\t( bad film",  # unclosed bracket
    "skip\t( a b )",
    "neg\traw:A (bad) film.",
    "pos",  # no tab
    "pos\t( a ( very ( very ( long ( sentence ( here indeed ) ) ) ) ) )",
]


@pytest.fixture(params=["plain", "gz"])
def corpus(request, tmp_path):
    data = ("\n".join(LINES) + "\n").encode("utf-8") + b"neg\t( \xff )\n"
    if request.param == "gz":
        path = tmp_path / "corpus.tsv.gz"
        path.write_bytes(gzip.compress(data))
    else:
        path = tmp_path / "corpus.tsv"
        path.write_bytes(data)
    return path


def test_counts_drops_and_skips_with_file_and_line(corpus, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    reader = TabSeparatedTrees(max_length=6)
    instances = list(reader.read(corpus))
    assert [i["label"].label for i in instances] == ["pos", "neg"]
    assert [t.text for t in instances[1]["text"].tokens] == [
        "A",
        "-LRB-",
        "bad",
        "-RRB-",
        "film",
        ".",
    ]
    assert reader.skipped == Counter(
        {"malformed parse": 1, "missing column": 1, "invalid UTF-8": 1}
    )
    # A line over max_length is left out on purpose: counted as dropped, not logged alone.
    assert reader.dropped == Counter({"unwanted": 1, "over max_length 6": 1})
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert f"{corpus}:3: skipped: malformed parse: text parse: 1 unclosed '('" in messages
    assert f"{corpus}:6: skipped: missing column: no tab" in messages
    assert not any(m.startswith(f"{corpus}:7:") for m in messages)
    assert any(m.startswith(f"{corpus}:8: skipped: invalid UTF-8") for m in messages)
    summary = [m for m in messages if m.startswith(f"{corpus}: read ")]
    assert len(summary) == 1
    assert summary[0].startswith(f"{corpus}: read 2 instances; dropped 2 (")
    assert "unwanted: 1" in summary[0] and "over max_length 6: 1" in summary[0]
    assert summary[0].endswith(
        "skipped 3 malformed (malformed parse: 1, missing column: 1, invalid UTF-8: 1)"
    )


def test_crop_pad_on_parsed_and_raw_sentences(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("pos\t( ( a good ) ( film indeed ) )\nneg\traw:bad\n")
    instances = list(TabSeparatedTrees(crop_pad_length=3).read(path))
    assert [t.text for t in instances[0]["text"].tokens] == ["good", "film", "indeed"]
    assert [t.text for t in instances[1]["text"].tokens] == [LEFT_PAD_TOKEN] * 2 + ["bad"]


def test_variables_in_paths_are_expanded(tmp_path, monkeypatch):
    path = tmp_path / "c.tsv"
    path.write_text("pos\t( a b )\n")
    monkeypatch.setenv("TREE_CORPUS", str(path))
    assert len(list(TabSeparatedTrees().read("${TREE_CORPUS:-nowhere.tsv}"))) == 1


def test_sentence_checks():
    reader = TabSeparatedTrees()
    assert reader.sentence_tokens_and_transitions("s", ["one"], "one") == (["one"], [SHIFT])
    with pytest.raises(MalformedExampleError, match="empty sentence: s is empty"):
        reader.sentence_tokens_and_transitions("s", "   ")
    with pytest.raises(MalformedExampleError, match="parse tokens don't match"):
        reader.sentence_tokens_and_transitions("s", "a cat", "( a dog )")
    with pytest.raises(MalformedExampleError, match="bad field"):
        reader.sentence_tokens_and_transitions("s", ["a", 3])


def test_json_helpers():
    assert parse_json_object('{"a": 1}') == {"a": 1}
    for bad, detail in (("[1]", "expected an object, got list"), ("{", "Expecting")):
        with pytest.raises(MalformedExampleError, match=detail):
            parse_json_object(bad)
    example = {"s1": None, "sentence": "x", "n": 3}
    assert string_field(example, ("s1", "sentence")) == "x"
    assert string_field(example, ("missing",)) is None
    with pytest.raises(MalformedExampleError, match="missing field: a or b"):
        string_field(example, ("a", "b"), required=True)
    with pytest.raises(MalformedExampleError, match="n must be a string, got int 3"):
        string_field(example, ("n",))


def test_bad_options():
    with pytest.raises(ValueError, match="crop_pad_length"):
        TabSeparatedTrees(crop_pad_length=0)
    with pytest.raises(ValueError, match="max_length"):
        TabSeparatedTrees(max_length=0)


def test_a_file_with_no_usable_line_says_how_many_were_read_and_why_not(tmp_path):
    """Not AllenNLP's `Found no field that needed padding; we are surprised you got this error`
    at the first batch: the file, the count, and why each line was left out."""
    path = tmp_path / "all_bad.tsv"
    path.write_text("neg\t( bad film\npos\nskip\t( a b )\npos\n\n", encoding="utf-8")
    with pytest.raises(ConfigurationError) as error:
        list(TabSeparatedTrees().read(str(path)))
    message = str(error.value)
    assert str(path) in message and "read 0 instances" in message
    assert "skipped 3 malformed (missing column: 2, malformed parse: 1)" in message
    assert "dropped 1 (unwanted: 1)" in message


def test_an_empty_file_says_so(tmp_path):
    path = tmp_path / "empty.tsv"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(
        ConfigurationError, match=r"read 0 instances.*the file has no line but blank ones"
    ):
        list(TabSeparatedTrees().read(str(path)))


def test_one_usable_line_is_enough(tmp_path):
    path = tmp_path / "one_good.tsv"
    path.write_text("neg\t( bad film\npos\t( a b )\n", encoding="utf-8")
    assert len(list(TabSeparatedTrees().read(str(path)))) == 1


LISTOPS_SAMPLE = FIXTURES_ROOT / "classification" / "listops" / "sample.tsv"  # 24 real lines


def test_a_read_cut_short_by_max_instances_says_so_with_the_override(caplog):
    """An archive keeps its config's reader caps: `allennlp evaluate` scored the first 300
    lines of a 10,000-line file without a word. Now the read that a cap stops warns once."""
    with caplog.at_level(logging.INFO, logger=LOGGER):
        capped = list(ListOpsReader(max_instances=5).read(str(LISTOPS_SAMPLE)))
    assert len(capped) == 5
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{LISTOPS_SAMPLE}: stopped after 5 instances: this reader's ")
    assert "max_instances is 5" in warnings[0] and "allennlp evaluate" in warnings[0]
    assert '{"validation_dataset_reader.max_instances": null}' in warnings[0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        whole = list(ListOpsReader(max_instances=100).read(str(LISTOPS_SAMPLE)))
        list(ListOpsReader().read(str(LISTOPS_SAMPLE)))
    assert len(whole) == 24
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    summaries = [r.getMessage() for r in caplog.records]
    assert summaries == [f"{LISTOPS_SAMPLE}: read 24 instances; dropped 0; skipped 0 malformed"] * 2


def test_max_instances_counts_instances_and_a_cap_with_dropped_lines_still_warns(caplog):
    """AllenNLP 2.10 also cut the *lines* at max_instances, so lines left out by max_length
    made a capped read shorter than its cap, and it ended as if the file had, without the
    warning (a smoke run's `max_instances: 500` scored 495 test pairs in silence). Now the cap
    counts instances, and the read it stops says so."""
    lines = LISTOPS_SAMPLE.read_text().splitlines()
    # Tokens, brackets not counted (what max_length counts).
    lengths = [len([t for t in line.split("\t")[1].split() if t not in "()"]) for line in lines]
    limit = 10
    assert sum(length <= limit for length in lengths[:8]) == 5  # 3 of the first 8 dropped
    assert sum(length <= limit for length in lengths) >= 8
    with caplog.at_level(logging.INFO, logger=LOGGER):
        capped = list(ListOpsReader(max_instances=8, max_length=limit).read(str(LISTOPS_SAMPLE)))
    assert len(capped) == 8
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "stopped after 8 instances" in warnings[0]
