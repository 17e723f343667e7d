"""benepar model training on SNLI trees: reading, vocabularies, scorer, save/load, both APIs."""

import gzip
import json
from pathlib import Path

import benepar
import nltk
import pytest
import torch
from benepar import decode_chart

from spinn_allennlp.data.binarization import binary_transitions
from spinn_allennlp.data.labeled_trees import binary_tree_steps, parse_labeled_tree
from spinn_allennlp.testing import load_script
from spinn_core.transitions import constituent_spans
from tools import benepar_training as bt
from tools.testing.benepar import tiny_benepar

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "trees" / "snli_parses_sample.jsonl"

T = nltk.Tree.fromstring


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models gain nothing from threads, and on a busy machine extra threads stall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def trees():
    return bt.read_snli_trees(FIXTURE)


@pytest.fixture(scope="module")
def trained():
    """A tiny parser trained for a few seconds on the fixture trees, saved as float16."""
    return tiny_benepar()


# ------------------------------------------------------------------------------- reading


def test_reads_deduplicated_trees_rooted_in_top(trees):
    lines = FIXTURE.read_text().splitlines()
    assert len(lines) == 30
    records = [json.loads(line) for line in lines]
    distinct = {r[f] for r in records for f in bt.PARSE_FIELDS}
    assert len(trees) == len(distinct) == 40
    assert all(t.label() == "TOP" and len(t) == 1 for t in trees)
    # Leaves are SNLI's tokens (those of the binary parse), PTB-escaped.
    first = records[0]
    assert (
        trees[0].leaves()
        == first["sentence1_binary_parse"].replace("(", " ").replace(")", " ").split()
    )
    assert str(trees[0]) == str(bt.prepare_tree(T(first["sentence1_parse"])))


def test_reads_lines_paths_and_gzip_alike(trees, tmp_path):
    gz = tmp_path / "sample.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as handle:
        handle.write(FIXTURE.read_text())
    from_lines = bt.read_snli_trees(FIXTURE.read_text().splitlines())
    from_gz = bt.read_snli_trees(str(gz))
    from_two = bt.read_snli_trees([FIXTURE, gz])  # second file adds nothing new
    assert [str(t) for t in from_lines] == [str(t) for t in from_gz] == [str(t) for t in trees]
    assert len(from_two) == len(trees)
    assert len(bt.read_snli_trees(FIXTURE, dedupe=False)) == 60


def test_prepare_tree_relabels_root_or_adds_top():
    assert bt.prepare_tree(T("(ROOT (NP (DT a) (NN dog)))")).label() == "TOP"
    wrapped = bt.prepare_tree(T("(NP (DT a) (NN dog))"))
    assert wrapped.label() == "TOP" and wrapped[0].label() == "NP"


def test_example_unescapes_words():
    tree = bt.prepare_tree(
        T("(ROOT (NP (NP (NN dog)) (PRN (-LRB- -LRB-) (NN pet) (-RRB- -RRB-))))")
    )
    example = bt.TreeExample.from_tree(tree)
    assert example.words == ["dog", "(", "pet", ")"]
    assert example.leaves() == ["dog", "-LRB-", "pet", "-RRB-"]
    assert example.without_tree().pos() == tree.pos()


# ------------------------------------------------------------------- SST's bracketing

SST_SAMPLE = FIXTURE.parents[1] / "classification" / "sst" / "sst_sample.txt"
SST_MALFORMED = FIXTURE.parents[1] / "classification" / "sst" / "malformed.txt"
# Three real SST train lines: -LRB-/-RRB-, an escaped slash, two words.
SST_CASES = FIXTURE.parent / "sst_bracketing_cases.txt"


def sst_lines():
    return SST_SAMPLE.read_text().splitlines() + SST_CASES.read_text().splitlines()


def test_sst_trees_keep_the_bracketing_and_lose_the_sentiment():
    """Real SST lines: the same words and the same constituents as SST's binary tree (read as
    the SST reader reads it), one label for every constituent, no tag."""
    lines = sst_lines()
    trees = bt.read_sst_trees(lines)
    assert len(trees) == len(lines) == 31
    for line, tree in zip(lines, trees):
        tokens, transitions, _ = binary_tree_steps(parse_labeled_tree(line))
        assert tree.label() == "TOP" and len(tree) == 1
        assert tree.leaves() == tokens
        assert {tag for _, tag in tree.pos()} == {bt.UNKNOWN_TAG}
        spans = decode_chart.get_labeled_spans(tree)
        assert {label for _, _, label in spans} == {bt.BRACKET_LABEL}
        # benepar's spans are closed intervals [first, last]; ours (first, last + 1).
        assert {(start, end + 1) for start, end, _ in spans if end > start} == set(
            constituent_spans(transitions)
        )
        assert binary_transitions(tree) == (tokens, transitions)
    first = trees[0]
    assert str(first).startswith("(TOP\n  (BRACKET\n    (-UNKNOWN- Yet)")
    escaped = bt.read_sst_trees(SST_CASES)
    assert escaped[0].leaves()[:3] == ["-LRB-", "A", "-RRB-"]
    assert bt.TreeExample.from_tree(escaped[0]).words[:3] == ["(", "A", ")"]
    assert "drama\\/action" in escaped[1].leaves()
    assert "drama/action" in bt.TreeExample.from_tree(escaped[1]).words
    assert str(escaped[2]) == "(TOP (BRACKET (-UNKNOWN- Eh) (-UNKNOWN- .)))"


def test_sst_files_gzip_dedupe_and_malformed_lines(tmp_path):
    gz = tmp_path / "sst.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as handle:
        handle.write(SST_SAMPLE.read_text() * 2)
    assert len(bt.read_sst_trees(gz)) == 28
    assert len(bt.read_sst_trees(gz, dedupe=False)) == 56
    assert len(bt.read_sst_trees([SST_SAMPLE, SST_CASES, gz])) == 31
    assert bt.read_sst_trees(SST_CASES, label="X")[2][0].label() == "X"
    malformed = tmp_path / "malformed.txt"
    lines = SST_MALFORMED.read_bytes().decode("utf-8", "replace").splitlines()
    malformed.write_text("\n".join(lines[:2]) + "\n")
    with pytest.raises(ValueError, match="^malformed.txt:2: unbalanced brackets: "):
        bt.read_sst_trees(malformed)


def test_untagged_words_take_no_part_in_the_tag_loss(trees):
    sst = bt.read_sst_trees(SST_CASES)
    vocabs = bt.build_vocabs(trees + sst)
    assert bt.UNKNOWN_TAG not in vocabs["tag_vocab"]
    assert vocabs["tag_vocab"] == bt.build_vocabs(trees)["tag_vocab"]
    assert bt.BRACKET_LABEL in vocabs["label_vocab"]
    parser = bt.build_parser(vocabs, bt.TINY_HPARAMS)
    snli_example = bt.TreeExample.from_tree(trees[0])
    encoded = parser.encode(snli_example)
    plain = super(bt.TrainableChartParser, parser).encode(snli_example)
    assert torch.equal(encoded["tag_labels"], plain["tag_labels"])
    assert (encoded["tag_labels"][1:-1] >= 0).all()
    encoded = parser.encode(bt.TreeExample.from_tree(sst[0]))  # -LRB- A -RRB- mess .
    assert (encoded["tag_labels"] == -100).all() and len(encoded["tag_labels"]) == 5 + 2
    bracket = vocabs["label_vocab"][bt.BRACKET_LABEL]
    chart = encoded["span_labels"]  # closed intervals [first, last]
    assert [chart[1, 2], chart[0, 2], chart[0, 3], chart[0, 4]] == [bracket] * 4
    assert chart[0, 1] == 0 and chart[2, 3] == 0
    # The tag loss's weight changes the loss of an SNLI sentence, not that of an SST one.
    parser.eval()

    def loss(example, tag_loss_scale):
        parser.tag_loss_scale = tag_loss_scale
        ((_, subbatch),) = parser.encode_and_collate_subbatches([example], 2000)
        return parser.compute_loss(subbatch).item()

    sst_example = bt.TreeExample.from_tree(sst[0])
    assert loss(sst_example, 0.0) == pytest.approx(loss(sst_example, 5.0), rel=1e-6)
    assert loss(snli_example, 5.0) > loss(snli_example, 0.0) + 1e-3


# ------------------------------------------------------------------------------ vocabulary


def test_vocabularies(trees):
    vocabs = bt.build_vocabs(trees)
    assert vocabs["label_vocab"][""] == 0 and "NP" in vocabs["label_vocab"]
    assert "TOP" not in vocabs["label_vocab"] and "ROOT" not in vocabs["label_vocab"]
    assert vocabs["tag_vocab"]["UNK"] == 0 and "NN" in vocabs["tag_vocab"]
    assert sorted(vocabs["tag_vocab"].values()) == list(range(len(vocabs["tag_vocab"])))
    assert vocabs["char_vocab"]["a"] == ord("a")


def test_unknown_hparam_and_unsupported_combination_are_refused(trees):
    vocabs = bt.build_vocabs(trees)
    with pytest.raises(KeyError):
        bt.build_parser(vocabs, {"d_modle": 32})
    with pytest.raises(ValueError):
        bt.build_parser(vocabs, {**bt.TINY_HPARAMS, "use_pretrained": True})


# ---------------------------------------------------------------------------------- scorer

GOLD = (
    "(ROOT (S (NP (DT A) (NN man)) (VP (VBZ is) (VP (VBG sleeping) (PP (IN on) "
    "(NP (DT a) (NN couch))))) (. .)))"
)


def test_identical_trees_score_one():
    score = bt.score_trees([T(GOLD)], [T(GOLD)])
    assert (score.precision, score.recall, score.f1, score.exact_match) == (1.0, 1.0, 1.0, 1.0)
    # 6 brackets: S, NP, VP, VP, PP, NP (ROOT and part-of-speech nodes do not count).
    assert score.gold == score.predicted == score.matched == 6
    assert score.tag_accuracy == 1.0 and score.tags_total == 7  # "." is not counted


def test_known_partial_matches():
    # Inner VP covers only "sleeping": VP(3,7) is replaced by VP(3,4); 5 of 6 match.
    wrong_vp = (
        "(TOP (S (NP (DT A) (NN man)) (VP (VBZ is) (VP (VBG sleeping)) (PP (IN on) "
        "(NP (DT a) (NN couch)))) (. .)))"
    )
    score = bt.score_trees([T(GOLD)], [T(wrong_vp)])
    assert (score.matched, score.gold, score.predicted) == (5, 6, 6)
    assert score.f1 == pytest.approx(5 / 6)
    # Inner VP missing: precision 5/5, recall 5/6, F1 = 10/11.
    flat = (
        "(TOP (S (NP (DT A) (NN man)) (VP (VBZ is) (VBG sleeping) (PP (IN on) "
        "(NP (DT a) (NN couch)))) (. .)))"
    )
    score = bt.score_trees([T(GOLD)], [T(flat)])
    assert score.precision == 1.0 and score.recall == pytest.approx(5 / 6)
    assert score.f1 == pytest.approx(10 / 11) and score.exact_match == 0.0
    # Corpus level is micro-averaged: (6 + 5) / (6 + 6) recall over the two sentences.
    both = bt.score_trees([T(GOLD), T(GOLD)], [T(GOLD), T(flat)])
    assert both.recall == pytest.approx(11 / 12) and both.precision == 1.0
    assert both.exact_match == 0.5


def test_punctuation_attachment_is_ignored():
    inside = (
        "(TOP (S (NP (DT A) (NN man)) (VP (VBZ is) (VP (VBG sleeping) (PP (IN on) "
        "(NP (DT a) (NN couch)))) (. .))))"
    )
    assert bt.score_trees([T(GOLD)], [T(inside)]).f1 == 1.0
    # A bracket over punctuation only disappears.
    gold = T("(ROOT (S (NP (NNS Dogs)) (VP (VBP run)) (. .)))")
    pred = T("(TOP (S (NP (NNS Dogs)) (VP (VBP run)) (FRAG (. .))))")
    assert bt.score_trees([gold], [pred]).f1 == 1.0


def test_punctuation_is_decided_by_gold_tags():
    gold = T("(ROOT (S (NP (NNS Dogs)) (VP (VBP run)) (. .)))")
    mistagged = T("(TOP (S (NP (NNS Dogs)) (VP (VBP run) (NN .))))")
    score = bt.score_trees([gold], [mistagged])
    assert score.f1 == 1.0 and score.tag_accuracy == 1.0


def test_label_conventions():
    gold = T("(ROOT (S (NP-SBJ (PRP He)) (VP (VBZ sits) (PRT (RP down)))))")
    pred = T("(TOP (S (NP (PRP He)) (VP (VBZ sits) (ADVP (RP down)))))")
    assert bt.score_trees([gold], [pred]).f1 == 1.0  # NP-SBJ = NP, PRT = ADVP
    wrong = T("(TOP (S (NP (PRP He)) (VP (VBZ sits) (PP (RP down)))))")
    assert bt.score_trees([gold], [wrong]).matched == 3


def test_repeated_unary_brackets_count_as_multisets():
    gold = T("(ROOT (NP (NP (NNS dogs))))")
    pred = T("(TOP (NP (NNS dogs)))")
    score = bt.score_trees([gold], [pred])
    assert (score.matched, score.gold, score.predicted) == (1, 2, 1)
    assert score.precision == 1.0 and score.recall == 0.5


def test_scorer_refuses_different_words():
    with pytest.raises(ValueError):
        bt.score_trees([T(GOLD)], [T("(TOP (S (NP (DT A) (NN dog)) (VP (VBZ is))))")])
    with pytest.raises(ValueError):
        bt.score_trees([T(GOLD)], [])


# ------------------------------------------------------------------ training, saving, loading


def test_training_learns_and_keeps_best(trained, trees):
    result, _ = trained
    assert result.steps == 30 and result.best_dev is not None
    assert result.best_dev.f1 == max(h["dev_f1"] for h in result.history)
    untrained = bt.build_parser(bt.build_vocabs(trees), bt.TINY_HPARAMS)
    examples = [bt.TreeExample.from_tree(t) for t in trees]
    assert bt.evaluate(result.parser, examples).f1 > bt.evaluate(untrained, examples).f1 + 0.1


def test_unlabeled_quality_is_the_tree_sources_measure(trees):
    """Gold SNLI trees against themselves or their labeled binarization: all brackets match
    (the gold side is SNLI's binary parse); SST's trees against themselves likewise."""
    assert bt.unlabeled_quality(trees, trees).bracket_totals.f1 == 1.0
    assert bt.unlabeled_quality(trees, bt.binarize_trees(trees)).exact == len(trees)
    sst = bt.read_sst_trees(SST_SAMPLE)
    assert bt.unlabeled_quality(sst, sst).bracket_totals.f1 == 1.0
    flat = T("(TOP (BRACKET (-UNKNOWN- Eh) (-UNKNOWN- ,) (-UNKNOWN- no)))")
    quality = bt.unlabeled_quality([bt.read_sst_trees(["(2 (2 (2 Eh) (2 ,)) (2 no))"])[0]], [flat])
    assert quality.as_dict()["bracket_f1"] == 1.0  # unknown label: the first child heads
    with pytest.raises(ValueError):
        bt.unlabeled_quality(trees[:1], trees[1:2])


def test_training_on_binarized_snli_and_sst_picks_the_best_unlabeled_check(trees):
    sst = bt.read_sst_trees(SST_SAMPLE)
    settings = bt.TrainSettings(
        batch_size=8,
        learning_rate=2e-2,
        warmup_steps=5,
        max_steps=24,
        checks_per_epoch=3,
        decay_patience=100,
        seed=0,
        select_on="unlabeled",
    )
    train = bt.binarize_trees(trees) + sst[:24]
    result = bt.train_parser(
        train,
        trees,
        hparams=bt.TINY_HPARAMS,
        settings=settings,
        log=lambda message: None,
        bracket_dev_trees=sst[24:],
    )
    labels = result.parser.label_vocab
    assert "@NP" in labels and "NP" in labels and bt.BRACKET_LABEL in labels
    assert len(result.history) >= 3
    for check in result.history:
        both = (check["dev_unlabeled_f1"] + check["bracket_dev_unlabeled_f1"]) / 2
        assert check["selection_score"] == pytest.approx(both)
        assert 0.0 <= check["dev_f1"] <= 1.0
    best = max(result.history, key=lambda check: check["selection_score"])
    assert result.best_check == best and result.best_step == best["step"]
    with pytest.raises(ValueError, match="select_on"):
        bt.train_parser(train, trees, settings=bt.TrainSettings(), bracket_dev_trees=sst)
    with pytest.raises(ValueError, match="select_on"):
        bt.TrainSettings(select_on="both")


def test_saved_file_format_and_float16_round_trip(trained, trees):
    result, path = trained
    data = torch.load(path, map_location="cpu")
    assert set(data) == {"config", "state_dict"}
    assert set(data["config"]) == {"tag_vocab", "label_vocab", "char_vocab", "hparams"}
    assert all(
        t.dtype == torch.float16 for t in data["state_dict"].values() if t.is_floating_point()
    )
    loaded = bt.load_parser(path)
    assert all(p.dtype == torch.float32 for p in loaded.parameters())
    assert bt.count_parameters(loaded) == bt.count_parameters(result.parser)
    examples = [bt.TreeExample.from_tree(t) for t in trees]
    assert bt.evaluate(loaded, examples).f1 == pytest.approx(
        bt.evaluate(result.parser, examples).f1, abs=0.02
    )


UNSEEN = [
    "Zoë",
    "naïve",
    "façade",
    "Straße",
    "東京",
    "😀",
    "—",
    "xqzvkwj",
    "McDONALD'S",
    "(",
    "e-mail",
    "3.14",
    "#",
]


def test_nltk_api_parses_including_unseen_words_and_characters(trained):
    _, path = trained
    parser = benepar.Parser(str(path), language_code="en")
    words = ["A", "man", "is", "sleeping", "on", "a", "couch", "."]
    tree = parser.parse(benepar.InputSentence(words=words))
    assert isinstance(tree, nltk.Tree) and tree.label() == "TOP" and tree.leaves() == words
    for words in (["The"] + UNSEEN + ["."], ["Zoë"], ["😀", "!"]):
        tree = parser.parse(benepar.InputSentence(words=words))
        assert len(tree.leaves()) == len(words)
    # A plain token list works too; nothing here needs NLTK's punkt data.
    assert parser.parse(["Dogs", "bark"]).leaves() == ["Dogs", "bark"]


def test_spacy_api_parses_including_unseen_characters(trained):
    spacy = pytest.importorskip("spacy")
    _, path = trained
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("benepar", config={"model": str(path)})
    doc = nlp("A man is sleeping on a couch. Zoë's naïve façade in 東京 😀 — e-mail xqzvkwj!")
    sents = list(doc.sents)
    assert len(sents) == 2
    for sent in sents:
        tree = T(sent._.parse_string)
        assert tree.leaves() == [
            token.text.replace("(", "-LRB-").replace(")", "-RRB-") for token in sent
        ]
        constituents = list(sent._.constituents)
        assert (constituents[0].start, constituents[0].end) == (sent.start, sent.end)
        assert all(sent.start <= c.start < c.end <= sent.end for c in constituents)


def test_too_long_sentence_raises(trained):
    _, path = trained
    parser = benepar.Parser(str(path), language_code="en")
    limit = bt.TINY_HPARAMS["encoder_max_len"] - 2
    assert len(parser.parse(["dog"] * limit).leaves()) == limit
    with pytest.raises(ValueError):
        parser.parse(["dog"] * (limit + 1))


def test_cli_writes_model_and_metrics(tmp_path):
    cli = load_script("scripts/train_benepar.py")
    out = tmp_path / "m.pt"
    try:
        assert (
            cli.main(
                [
                    "--train",
                    str(FIXTURE),
                    "--dev",
                    str(FIXTURE),
                    "--out",
                    str(out),
                    "--tiny",
                    "--max-steps",
                    "3",
                    "--threads",
                    "1",
                    "--keep-dev-overlap",
                    "--set",
                    "batch_size=16",
                    "--lr",
                    "0.002",
                ]
            )
            == 0
        )
    finally:
        torch.set_num_threads(1)  # main() set it; the module fixture restores the original
    metrics = json.loads(out.with_suffix(".metrics.json").read_text())
    assert metrics["steps"] == 3 and metrics["dev_sentences"] == 40
    assert metrics["settings"]["select_on"] == "labeled" and not metrics["binarized_snli"]
    assert set(metrics["unlabeled"]) == {"snli_dev"} and metrics["sst_train_sentences"] == 0
    assert metrics["settings"]["batch_size"] == 16
    assert metrics["settings"]["learning_rate"] == 0.002
    assert 0.0 <= metrics["dev"]["f1"] <= 1.0 and metrics["file_bytes"] == out.stat().st_size
    assert benepar.Parser(str(out), language_code="en").parse(["Dogs", "bark"])


def test_cli_learns_sst_bracketing_too(tmp_path):
    cli = load_script("scripts/train_benepar.py")
    out = tmp_path / "m.pt"
    arguments = ["--train", str(FIXTURE), "--dev", str(FIXTURE), "--out", str(out), "--tiny"]
    arguments += ["--max-steps", "4", "--threads", "1", "--keep-dev-overlap", "--binarize"]
    arguments += ["--sst-train", str(SST_SAMPLE), str(SST_CASES), "--sst-holdout", "5"]
    try:
        assert cli.main(arguments + ["--set", "batch_size=16"]) == 0
    finally:
        torch.set_num_threads(1)
    metrics = json.loads(out.with_suffix(".metrics.json").read_text())
    assert metrics["settings"]["select_on"] == "unlabeled" and metrics["binarized_snli"]
    assert metrics["snli_train_sentences"] == 40 and metrics["sst_train_sentences"] == 26
    assert metrics["sst_holdout_sentences"] == 5 and metrics["train_sentences"] == 66
    assert set(metrics["unlabeled"]) == {"snli_dev", "sst_holdout"}
    assert metrics["unlabeled"]["sst_holdout"]["sentences"] == 5
    assert "selection_score" in metrics["best_check"]
    assert benepar.Parser(str(out), language_code="en").parse(["Dogs", "bark", "."])
    # The control: the same held-out sentences scored, none of SST learned.
    try:
        assert cli.main(arguments + ["--sst-holdout-only"]) == 0
    finally:
        torch.set_num_threads(1)
    metrics = json.loads(out.with_suffix(".metrics.json").read_text())
    assert metrics["sst_train_sentences"] == 0 and metrics["train_sentences"] == 40
    assert metrics["unlabeled"]["sst_holdout"]["sentences"] == 5
