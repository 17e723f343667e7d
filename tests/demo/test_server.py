"""The demo server in-process: its JSON endpoint and form on real (tiny) archives, and bad input
of every kind answered with an error while the server keeps serving."""

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import List, Sequence

import pytest
from allennlp.data import Vocabulary

from spinn_allennlp.classification.dataset_readers import (
    ListOpsReader,
    TextClassificationTransitionsReader,
)
from spinn_allennlp.data.tree_sources import TreeSource, TreeSourceError
from spinn_allennlp.demo.server import MAX_BODY_BYTES, DemoApp, build_server, main
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import CONFIGS_ROOT, FIXTURES_ROOT
from spinn_allennlp.testing.model_test_case import archive_untrained
from spinn_core.transitions import balanced_transitions
from tools.testing.configs import (
    LISTOPS_SAMPLE,
    SNLI_SAMPLE,
    listops_config,
    listops_small_overrides,
    snli_config,
    snli_small_overrides,
)

FULL_SPINN = FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz"
PAIR = {"premise": "Two dogs run in a park.", "hypothesis": "Animals move."}
TEXT_SAMPLE = FIXTURES_ROOT / "classification" / "sst_dev_parses_sample.jsonl"


@TreeSource.register("demo_test_fails_on_unicorn", exist_ok=True)
class FailsOnUnicorn(TreeSource):
    """Balanced trees, except for a sentence with "unicorn": a parser failing on one sentence."""

    name = "demo_test_fails_on_unicorn"

    def transitions_batch(self, sentences: Sequence[Sequence[str]]) -> List[List[int]]:
        if any("unicorn" in tokens for tokens in sentences):
            raise TreeSourceError("this parser has never seen a unicorn")
        return [balanced_transitions(len(tokens)) for tokens in sentences]


def serve(argv):
    server = build_server(argv + ["--port", "0"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def full_spinn():
    """The 0.1.0 full-SPINN archive: trees from its own parser."""
    server = serve([str(FULL_SPINN)])
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def pi_nt(tmp_path_factory):
    """An untrained small SPINN-PI-NT (no parser) whose raw-text trees come from a tree source
    that fails on one kind of sentence."""
    vocab = Vocabulary.from_instances(SnliTransitionsReader().read(SNLI_SAMPLE))
    overrides = snli_small_overrides(
        "spinn_pi_nt", **{"dataset_reader.tree_source": {"type": "balanced"}}
    )
    archive = archive_untrained(
        snli_config("spinn_pi_nt"), overrides, tmp_path_factory.mktemp("demo") / "pi_nt", vocab
    )
    server = serve([archive, "--tree-source", '{"type": "demo_test_fails_on_unicorn"}'])
    yield server
    server.shutdown()
    server.server_close()


def post(server, path, data: bytes, content_type="application/json"):
    request = urllib.request.Request(
        server.url.rstrip("/") + path, data=data, headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


def predict(server, pair):
    status, body = post(server, "/predict", json.dumps(pair).encode("utf-8"))
    return status, json.loads(body)


def words(tree: str) -> List[str]:
    return tree.replace("(", " ").replace(")", " ").split()


def test_json_endpoint_gives_probabilities_trees_and_sources(full_spinn):
    status, output = predict(full_spinn, PAIR)
    assert status == 200
    assert set(output["label_probs"]) == {"entailment", "neutral", "contradiction"}
    assert sum(output["label_probs"].values()) == pytest.approx(1.0, abs=1e-6)
    assert words(output["premise_tree"]) == "Two dogs run in a park .".split()
    assert words(output["hypothesis_tree"]) == "Animals move .".split()
    assert output["premise_transitions_source"] == "predicted"


def test_tree_source_named_on_the_command_line_makes_the_trees(pi_nt):
    status, output = predict(pi_nt, PAIR)
    assert status == 200 and output["premise_transitions_source"] == "demo_test_fails_on_unicorn"
    assert output["premise_tree"] == "( ( ( Two dogs ) ( run in ) ) ( ( a park ) . ) )"


def test_a_tree_source_failing_on_one_sentence_gives_an_error_then_serving_goes_on(pi_nt):
    status, output = predict(pi_nt, {"premise": "A unicorn sleeps.", "hypothesis": "Yes."})
    # Well formed, but this input can't be used: 422.
    assert status == 422 and "never seen a unicorn" in output["error"]
    assert "label_probs" in predict(pi_nt, PAIR)[1]


@pytest.mark.parametrize(
    "pair, message",
    [
        ({"premise": "", "hypothesis": "Animals move."}, "premise is empty"),
        ({"premise": "A dog.", "hypothesis": "   "}, "hypothesis is empty"),
        ({"premise": "A dog."}, "the hypothesis is missing"),
        ({"premise": "A dog.", "hypothesis": None}, "the hypothesis is missing"),
        ({"premise": "A dog.", "hypothesis": 7}, "hypothesis must be a string"),
        ({"premise": ["A", "dog"], "hypothesis": "x"}, "premise must be a string"),
        ({"premise": "dog " * 6000, "hypothesis": "x"}, "premise is too long"),
    ],
)
def test_bad_pairs_get_errors(full_spinn, pair, message):
    status, output = predict(full_spinn, pair)
    assert status == 400 and message in output["error"]


def test_long_sentences_and_unknown_characters_get_trees(full_spinn):
    long_premise = " ".join(["The dog runs"] * 100)  # 300 words
    status, output = predict(full_spinn, {"premise": long_premise, "hypothesis": "Ω☃𝔘 ﷽ <b>"})
    assert status == 200 and "error" not in output, output
    assert words(output["premise_tree"]) == long_premise.split()
    assert {"Ω", "☃", "𝔘", "<", ">"} <= set(words(output["hypothesis_tree"]))
    assert "label_probs" in predict(full_spinn, PAIR)[1]


def test_malformed_requests_get_errors(full_spinn):
    assert post(full_spinn, "/predict", b"{not json")[0] == 400
    assert post(full_spinn, "/predict", b"\xff\xfe")[0] == 400
    status, body = post(full_spinn, "/predict", b"[1, 2]")
    assert status == 400 and "must be a JSON object" in json.loads(body)["error"]
    status, body = post(full_spinn, "/predict", b"x" * (MAX_BODY_BYTES + 1))
    assert status == 400 and "too large" in body
    assert post(full_spinn, "/nowhere", b"{}")[0] == 404
    assert "label_probs" in predict(full_spinn, PAIR)[1]


def test_form_post_draws_the_result_and_escapes_the_input(full_spinn):
    hostile = '<script>alert("x")</script>'
    form = urllib.parse.urlencode({"premise": hostile, "hypothesis": "A dog </textarea><b>"})
    status, page = post(full_spinn, "/", form.encode(), "application/x-www-form-urlencoded")
    assert status == 200
    assert "<script>" not in page and "</textarea><b>" not in page
    assert "&lt;script&gt;" in page  # shown back, as text
    assert page.count("<svg") == 2 and "Label:" in page
    status, page = post(
        full_spinn, "/", b"premise=&hypothesis=x", "application/x-www-form-urlencoded"
    )
    assert status == 400 and "premise is empty" in page and "<svg" not in page


def test_the_page_runs_no_scripts(full_spinn):
    with urllib.request.urlopen(full_spinn.url, timeout=60) as response:
        policy = response.headers["Content-Security-Policy"]
        page = response.read().decode("utf-8")
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "<script" not in page and 'id="premise"' in page and 'id="submit"' in page


class Fails:
    """A predictor with a bug: any input raises."""

    def predict_json(self, inputs):
        raise RuntimeError("a bug")


class RefusesAndFails:
    """The two kinds of `{"error": ...}` a `LinePredictor` answers with."""

    def predict_json(self, inputs):
        if inputs["premise"] == "refuse":
            return {"error": "malformed parse: premise parse: 1 unclosed '('"}
        return {"error": "prediction failed: RuntimeError: a bug"}


def test_status_codes_tell_bad_requests_from_server_faults():
    pair = {"premise": "refuse", "hypothesis": "x"}
    assert DemoApp(Fails()).predict(pair)[0] == 500
    assert DemoApp(RefusesAndFails()).predict(pair)[0] == 422
    assert DemoApp(RefusesAndFails()).predict({**pair, "premise": "y"})[0] == 500
    assert DemoApp(RefusesAndFails()).predict({"premise": "y"})[0] == 400


# --- single-sentence classifiers, and archives the demo cannot serve ------------------------


@pytest.fixture(scope="module")
def vocab_of_sentences():
    reader = TextClassificationTransitionsReader()
    return Vocabulary.from_instances(reader.read(str(TEXT_SAMPLE)))


@pytest.fixture(scope="module")
def text_spinn(tmp_path_factory, vocab_of_sentences):
    """An untrained small full SPINN in `spinn_classifier` (our single-sentence reader)."""
    overrides = {
        "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
        "model.encoder.input_dim": 12,
        "model.encoder.hidden_dim": 10,
        "model.encoder.tracker.tracking_dim": 6,
        "model.mlp_dim": 8,
    }
    archive = archive_untrained(
        CONFIGS_ROOT / "classification" / "text_spinn.jsonnet",
        overrides,
        tmp_path_factory.mktemp("demo") / "text_spinn",
        vocab_of_sentences,
    )
    server = serve([archive])
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def basic_classifier(tmp_path_factory, vocab_of_sentences):
    """AllenNLP's basic_classifier with the spinn encoder (the issue's failing archive)."""
    os.environ.setdefault("FIXTURES", str(FIXTURES_ROOT))
    archive = archive_untrained(
        FIXTURES_ROOT / "classification" / "basic_classifier_spinn.jsonnet",
        {},
        tmp_path_factory.mktemp("demo") / "basic",
        vocab_of_sentences,
    )
    server = serve([archive])
    yield server
    server.shutdown()
    server.server_close()


def test_a_single_sentence_model_with_trees_is_served(text_spinn):
    status, output = predict(text_spinn, {"sentence": "A lovely , moving film ."})
    assert status == 200, output
    assert set(output["label_probs"]) == {"pos", "neg"} and output["label"] in {"pos", "neg"}
    assert sum(output["label_probs"].values()) == pytest.approx(1.0, abs=1e-6)
    assert words(output["sentence_tree"]) == "A lovely , moving film .".split()
    assert output["sentence_transitions_source"] == "predicted"  # its own parser
    form = urllib.parse.urlencode({"sentence": "A dull film ."}).encode()
    status, page = post(text_spinn, "/", form, "application/x-www-form-urlencoded")
    assert status == 200 and 'id="sentence"' in page and page.count("<svg") == 1
    status, output = predict(text_spinn, {"premise": "A dull film ."})
    assert status == 400 and output["error"] == "the sentence is missing"


def test_basic_classifier_with_the_spinn_encoder_is_served(basic_classifier):
    """basic_classifier reports no tree, but its spinn encoder (no parser, no transitions)
    composed the balanced tree of the tokens: the demo shows that tree, captioned so."""
    status, output = predict(basic_classifier, {"sentence": "A lovely film ."})
    assert status == 200, output
    assert set(output["label_probs"]) == {"pos", "neg"}
    assert words(output["sentence_tree"]) == "A lovely film .".split()
    assert output["sentence_tree"] == "( ( A lovely ) ( film . ) )"
    assert output["sentence_transitions_source"] == "balanced default tree"
    form = urllib.parse.urlencode({"sentence": "A dull film ."}).encode()
    status, page = post(basic_classifier, "/", form, "application/x-www-form-urlencoded")
    assert status == 200 and "this model reports no tree" not in page
    assert page.count("<svg") == 1 and "balanced default tree" in page


def test_an_archive_the_demo_cannot_serve_is_refused_at_start(tmp_path, capsys):
    reader = ListOpsReader()
    vocab = Vocabulary.from_instances(reader.read(str(LISTOPS_SAMPLE)))
    archive = archive_untrained(
        listops_config("spinn_pi_nt"), listops_small_overrides("spinn_pi_nt"), tmp_path / "l", vocab
    )
    assert main([archive, "--port", "0"]) == 2
    message = capsys.readouterr().err
    assert "the demo serves NLI models" in message and "ListOpsReader" in message
    assert "serving on" not in message


def test_the_json_endpoint_takes_the_predictor_s_json(pi_nt):
    """POST /predict takes what the predictor takes: SNLI's sentence1 / sentence2, and binary
    parses, which it follows (a parse is "gold"); an unbalanced one is the predictor's
    "malformed parse", not replaced silently."""
    snli = {"sentence1": "Two dogs run .", "sentence2": "Animals move ."}
    status, output = predict(pi_nt, snli)
    assert status == 200, output
    assert words(output["premise_tree"]) == "Two dogs run .".split()
    parsed = {
        **PAIR,
        "premise": "Two dogs run .",
        "premise_binary_parse": "( ( Two dogs ) ( run . ) )",
        "hypothesis": "Animals move .",
        "hypothesis_binary_parse": "( Animals ( move . ) )",
    }
    status, output = predict(pi_nt, parsed)
    assert status == 200, output
    assert output["premise_tree"] == "( ( Two dogs ) ( run . ) )"
    assert output["hypothesis_tree"] == "( Animals ( move . ) )"
    assert output["premise_transitions_source"] == "gold"
    status, output = predict(pi_nt, {**parsed, "premise_binary_parse": "( ( Two dogs ) run . )"})
    assert status == 422 and "malformed parse" in output["error"], output
    status, output = predict(pi_nt, {"sentence1": "Two dogs run ."})
    assert status == 400 and output["error"] == "the hypothesis is missing"


def test_a_client_that_leaves_early_is_no_error(full_spinn, caplog):
    """A client that disconnects before its answer (the browser tab closed): the server logs
    that it left, no traceback, and goes on serving."""
    import socket
    import struct
    import time

    body = json.dumps(PAIR).encode()
    host, port = full_spinn.server_address[:2]
    with caplog.at_level("INFO", logger="spinn_allennlp.demo.server"):
        for _ in range(3):
            client = socket.create_connection((host, port))
            client.sendall(
                b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            # Closed at once with a reset, before the prediction is written.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
        deadline = time.time() + 60
        while time.time() < deadline and "left before the answer" not in caplog.text:
            time.sleep(0.2)
    assert "left before the answer" in caplog.text
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    status, _ = predict(full_spinn, PAIR)
    assert status == 200
