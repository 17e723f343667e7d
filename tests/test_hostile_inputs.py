"""Hostile inputs through every public entry: the predictor (in process and through
`allennlp predict`), the reader, and the encoder. Each answers with a clear error, a counted
skip or a documented result — never a crash of the whole run, a hang or silent garbage."""

import json
import math
import random
import signal
from contextlib import contextmanager
from typing import Any, Dict, List

import pytest
import torch
from allennlp.common.util import lazy_groups_of
from allennlp.data import Vocabulary
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT, make_batch, pad_batch
from spinn_core.policies import Given, Mixed
from spinn_core.spinn import Spinn
from spinn_core.testing import policy_for_mode
from spinn_core.transitions import PAD, REDUCE, SHIFT
from tools.testing.cli import run_allennlp
from tools.testing.hostile import HostileLine, hostile_lines, is_blank, write_hostile_file

ARCHIVE = FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz"
LABELS = {"entailment", "neutral", "contradiction"}
BATCH_SIZE = 32


@contextmanager
def deadline(seconds: int):
    """Fails the test instead of hanging past ``seconds``."""

    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def lines() -> List[HostileLine]:
    """Thousands of lines, three 1,000-word premises raw and three parsed."""
    return hostile_lines(count=2000, num_long=3)


@pytest.fixture(scope="module")
def few_lines() -> List[HostileLine]:
    """The same kinds, fewer of each (the suite's in-process run)."""
    return hostile_lines(count=400, num_long=1, seed=1)


@pytest.fixture(scope="module")
def hostile_file(lines, tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "pairs.jsonl"
    write_hostile_file(path, lines)
    return path


@pytest.fixture(scope="module")
def predictor():
    return Predictor.from_archive(load_archive(str(ARCHIVE)), "spinn_nli")


def tree_tokens(tree: str) -> List[str]:
    return [symbol for symbol in tree.split(" ") if symbol not in ("(", ")")]


def check_answers(
    lines: List[HostileLine], outputs: List[Dict[str, Any]], blank_lines_answered: bool = False
) -> None:
    """One output per line (per non-blank line, unless `blank_lines_answered`), in order; good
    lines labelled (with a tree over their own premise: the order check), bad ones an error
    saying why, with the input; a blank line, when answered, the error "blank line"."""
    answered = [line for line in lines if blank_lines_answered or not is_blank(line)]
    assert len(outputs) == len(answered)
    reader = SnliTransitionsReader()
    for number, (line, output) in enumerate(zip(answered, outputs)):
        where = (number, line.kind, output.get("error"))
        if is_blank(line):
            assert output["error"] == "blank line", where
        elif line.error is None:
            assert "error" not in output, where
            assert output["label"] in LABELS, where
            probs = list(output["label_probs"].values())
            assert all(math.isfinite(p) for p in probs) and abs(sum(probs) - 1) < 1e-5, where
            instance = reader.example_to_instance(json.loads(line.text), use_label=False)
            assert tree_tokens(output["premise_tree"]) == instance["metadata"]["premise_tokens"]
        else:
            assert line.error in output["error"], where
            try:
                expected_input = json.loads(line.text)
            except (ValueError, RecursionError):
                expected_input = line.text
            if line.kind == "a byte that is not UTF-8":  # shown with U+FFFD for the byte
                expected_input = line.text.replace("\udce9", "\ufffd")
            assert json.dumps(output["input"]) == json.dumps(expected_input), where


def test_predictor_answers_every_line_in_order(predictor, few_lines):
    """What `allennlp predict` does with a file (load_line per non-blank line, batches of
    --batch-size, predict_batch_json), in process."""
    lines = few_lines
    loaded = [predictor.load_line(line.text + "\n") for line in lines if not is_blank(line)]
    outputs = []
    with deadline(600):
        for batch in lazy_groups_of(iter(loaded), BATCH_SIZE):
            outputs += predictor.predict_batch_json(batch)
    check_answers(lines, outputs)
    # Lines that fail alone get the same answer in a batch of one.
    assert predictor.predict_json(predictor.load_line('{"premise": 42}'))["error"]


@pytest.mark.robustness
def test_allennlp_predict_answers_every_line_in_order(lines, hostile_file, tmp_path):
    predictions = tmp_path / "predictions.jsonl"
    run_allennlp(
        "predict",
        str(ARCHIVE),
        str(hostile_file),
        "--output-file",
        str(predictions),
        "--batch-size",
        str(BATCH_SIZE),
        "--silent",
        "--include-package",
        "spinn_allennlp",
        cwd=tmp_path,
        timeout=900,
    )
    outputs = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    # Output line k answers input line k: blank lines too (AllenNLP's own command drops them).
    check_answers(lines, outputs, blank_lines_answered=True)


def test_reader_reads_good_lines_and_counts_the_rest(lines, hostile_file):
    reader = SnliTransitionsReader()
    with deadline(300):
        instances = list(reader.read(hostile_file))
    good = [line for line in lines if line.error is None and not is_blank(line)]
    bad = [line for line in lines if line.error is not None]

    def no_gold_label(line: HostileLine) -> bool:
        # SNLI pairs whose annotators gave no gold label are dropped (counted), broken or not.
        try:
            example = json.loads(line.text)
        except (ValueError, RecursionError):
            return False
        return isinstance(example, dict) and example.get("gold_label") == "-"

    dropped_good, dropped_bad = sum(map(no_gold_label, good)), sum(map(no_gold_label, bad))
    assert len(instances) == len(good) - dropped_good
    assert reader.dropped == {"no gold label": dropped_good + dropped_bad}
    assert sum(reader.skipped.values()) == len(bad) - dropped_bad
    assert not [reason for reason in reader.skipped if reason.startswith("unexpected")]
    # Whatever the tokens, the vocabulary survives its files.
    vocab = Vocabulary.from_instances(instances)
    directory = hostile_file.parent / "vocabulary"
    vocab.save_to_files(str(directory))
    loaded = Vocabulary.from_files(str(directory))
    assert loaded.get_index_to_token_vocabulary("tokens") == vocab.get_index_to_token_vocabulary(
        "tokens"
    )


# --- the encoder ------------------------------------------------------------------------------

VARIANTS = {
    "PI-NT level-wise": (dict(), "given"),
    "PI-NT thin stack": (dict(levelwise=False), "given"),
    "PI": (dict(tracking_dim=6), "given"),
    "SPINN given": (dict(tracking_dim=6, predict_transitions=True), "given"),
    "SPINN predicted": (dict(tracking_dim=6, predict_transitions=True), "predicted"),
    "SPINN mixed": (dict(tracking_dim=6, predict_transitions=True), "mixed"),
}


@pytest.fixture(params=list(VARIANTS))
def variant(request):
    options, mode = VARIANTS[request.param]
    torch.manual_seed(0)
    model = Spinn(input_dim=8, hidden_dim=10, **options).double()

    policy = policy_for_mode(mode, 0.5 if mode == "mixed" else 0.0)

    def encode(inputs, mask, transitions=None, **kwargs):
        with deadline(60):
            # (A test's own policy= replaces the variant's.)
            return model(inputs, mask, transitions, **{"policy": policy, **kwargs})

    encode.tracking = "tracking_dim" in options  # type: ignore[attr-defined]
    return encode, mode


def batch(lengths):
    inputs, mask, transitions = make_batch(lengths, 8, random.Random(1), dtype=torch.float64)
    return inputs, mask, transitions


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_word_vectors_are_refused(variant, value):
    encode, _ = variant
    inputs, mask, transitions = batch([3, 5, 2])
    inputs[1, 4, 3] = value
    with pytest.raises(ValueError, match="word 4 of sentence 1 of the batch is not finite"):
        encode(inputs, mask, transitions)


def test_non_finite_padding_is_never_read(variant):
    encode, mode = variant
    inputs, mask, transitions = batch([3, 5, 2])
    clean = encode(inputs, mask, transitions)
    inputs[0, 3:] = float("nan")
    inputs[2, 2:] = float("inf")
    if mode == "mixed":
        return  # random per call: covered by the other modes
    assert torch.equal(encode(inputs, mask, transitions).sentence, clean.sentence)


def test_an_all_padding_row_gives_zeros_and_leaves_the_rest_alone(variant):
    encode, mode = variant
    inputs, mask, transitions = batch([3, 0, 4])
    inputs.requires_grad_(True)
    output = encode(inputs, mask, transitions)
    assert torch.equal(output.sentence[1], torch.zeros(10, dtype=torch.float64))
    assert (output.transitions[1] == PAD).all()
    output.sentence.sum().backward()
    assert inputs.grad is not None and torch.isfinite(inputs.grad).all()
    if mode != "mixed":
        alone = encode(inputs[2:, :4], mask[2:, :4], transitions[2:, :7])
        assert torch.allclose(alone.sentence[0], output.sentence[2], atol=1e-12)


@pytest.mark.parametrize("words", [0, 5])
def test_an_empty_batch_gives_an_empty_result(variant, words):
    encode, _ = variant
    inputs = torch.zeros(0, words, 8, dtype=torch.float64)
    transitions = torch.zeros(0, max(0, 2 * words - 1), dtype=torch.long)
    output = encode(inputs, torch.zeros(0, words, dtype=torch.bool), transitions)
    assert output.sentence.shape == (0, 10) and output.transitions.size(0) == 0


def test_a_batch_of_zero_width_gives_zeros(variant):
    encode, _ = variant
    inputs = torch.zeros(3, 0, 8, dtype=torch.float64)
    mask = torch.zeros(3, 0, dtype=torch.bool)
    output = encode(inputs, mask, torch.zeros(3, 0, dtype=torch.long))
    assert torch.equal(output.sentence, torch.zeros(3, 10, dtype=torch.float64))


def test_a_mask_with_holes_is_refused(variant):
    encode, _ = variant
    inputs, mask, transitions = batch([3, 4])
    mask[1, 1] = False
    with pytest.raises(ValueError, match="mask row 1 has padding before a word"):
        encode(inputs, mask, transitions)


def test_inputs_and_mask_of_different_shapes_are_refused(variant):
    encode, _ = variant
    inputs, mask, transitions = batch([3, 4])
    with pytest.raises(ValueError, match=r"inputs must have shape \(batch, words, input_dim\)"):
        encode(inputs[:, :3], mask, transitions)
    with pytest.raises(ValueError, match="inputs must have shape"):
        encode(inputs[0], mask[0], transitions)


def test_transitions_of_the_wrong_shape_or_type_are_refused(variant):
    encode, mode = variant
    inputs, mask, transitions = batch([3, 4])
    with pytest.raises(ValueError, match="integer tensor"):
        encode(inputs, mask, transitions.double())
    with pytest.raises(ValueError, match=r"shape \(batch, steps\) with batch 2"):
        encode(inputs, mask, transitions[0])
    with pytest.raises(ValueError, match=r"shape \(batch, steps\) with batch 2"):
        encode(inputs, mask, transitions[:1])


def test_transitions_of_the_wrong_width(variant):
    encode, mode = variant
    tracking = encode.tracking
    inputs, mask, _ = batch([3, 4])
    S, R = SHIFT, REDUCE
    # Right-branching trees, PAD after the first sentence's five steps.
    transitions = torch.tensor([[S, S, S, R, R, PAD, PAD], [S, S, S, S, R, R, R]])
    if mode != "given":
        # Predicted: not followed. Mixed: followed where legal, the parser's own choice past
        # the end of a shorter sequence. Any width does; the parse is a tree over every word.
        for width in (1, 3, 20):
            followed = encode(inputs, mask, pad_batch(transitions.tolist(), PAD, width)[:, :width])
            assert (followed.transitions == SHIFT).sum(dim=1).tolist() == [3, 4]
            assert (followed.transitions == REDUCE).sum(dim=1).tolist() == [2, 3]
        if mode == "mixed":  # but the values must be transitions
            bad = transitions.clone()
            bad[0, 5] = 2
            with pytest.raises(ValueError, match="unknown transition value 2 at step 5 of"):
                encode(inputs, mask, bad)
        return
    # Too narrow for every word to be shifted: refused, forests allowed or not (sentence 0's
    # [S, S, S] is a forest of its three words).
    with pytest.raises(ValueError, match="sentence 0 .* fewer REDUCEs than one tree"):
        encode(inputs, mask, transitions[:, :3])
    with pytest.raises(ValueError, match="sentence 1 .* number of SHIFTs differs"):
        encode(inputs, mask, transitions[:, :3], policy=Given(left_padded=True))
    # Wider, padded with PAD: the same result.
    wide = pad_batch(transitions.tolist(), PAD, width=40)
    assert torch.equal(
        encode(inputs, mask, wide).sentence, encode(inputs, mask, transitions).sentence
    )
    # Wider with more steps: an extra SHIFT, a REDUCE of a one-item stack, an unknown value.
    for column, value, error in [
        (5, SHIFT, "sentence 0 .* number of SHIFTs differs"),
        (5, REDUCE, "sentence 0 .* REDUCE with fewer than two items"),
        (5, 2, "sentence 0 .* unknown transition value"),
        (1, PAD, "sentence 0 .* PAD before the end"),
    ]:
        bad = wide.clone()
        bad[0, column] = value
        with pytest.raises(ValueError, match=error):
            encode(inputs, mask, bad)
    # Narrower but every word shifted: a stack of trees. Refused (the top tree alone would be
    # the sentence, words left out), unless asked for: the paper's left-padded mode (the
    # encoder can't tell padding words from real ones), whose sentence vector is the top
    # tree's, here the last two words'.
    with pytest.raises(ValueError, match="sentence 1 .* fewer REDUCEs than one tree"):
        encode(inputs, mask, transitions[:, :5])
    forest = encode(inputs, mask, transitions[:, :5], policy=Given(left_padded=True))
    assert forest.transitions[1].tolist() == [S, S, S, S, R]
    if not tracking:
        # Without a tracker nothing else reaches the top tree.
        top = encode(inputs[1:, 2:4], mask[1:, 2:4], torch.tensor([[S, S, R]]))
        assert torch.allclose(forest.sentence[1], top.sentence[0], atol=1e-12)


def test_mixed_mode_shifts_every_word_of_a_left_padded_forest():
    """The paper's left-padded mode gives forests (pad SHIFTs under the sentence's tree, fewer
    steps than 2N - 1). A parser following its own predictions there, even one that reduces
    whenever it can, still shifts every word and ends with one tree."""
    torch.manual_seed(0)
    model = Spinn(input_dim=8, hidden_dim=10, tracking_dim=6, predict_transitions=True)
    assert model.tracker is not None and model.tracker.transition_classifier is not None
    with torch.no_grad():  # always predict REDUCE
        model.tracker.transition_classifier.bias.copy_(torch.tensor([-100.0, 100.0]))
    S, R = SHIFT, REDUCE
    # 3 pad items under "( a ( b c ) )" (8 steps), 1 pad item under "( ( a b ) c )" (6 steps).
    transitions = torch.tensor([[S, S, S, S, S, S, R, R, PAD], [S, S, S, R, S, R, PAD, PAD, PAD]])
    inputs = torch.randn(2, 6, 8)
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    output = model(inputs, mask, transitions, policy=Mixed(1.0))
    assert (output.transitions == SHIFT).sum(dim=1).tolist() == [6, 4]
