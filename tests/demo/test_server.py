"""The demo server in-process: its JSON endpoint and form on real (tiny) archives, and bad input
of every kind answered with an error while the server keeps serving."""

import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import List, Sequence

import pytest
from allennlp.data import Vocabulary

from spinn_allennlp.core.transitions import balanced_transitions
from spinn_allennlp.data.tree_sources import TreeSource, TreeSourceError
from spinn_allennlp.demo.server import MAX_BODY_BYTES, build_server
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_allennlp.testing.configs import SNLI_SAMPLE, snli_config, snli_small_overrides
from spinn_allennlp.testing.model_test_case import archive_untrained

FULL_SPINN = FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz"
PAIR = {"premise": "Two dogs run in a park.", "hypothesis": "Animals move."}


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
    assert status == 200 and "never seen a unicorn" in output["error"]
    assert "label_probs" in predict(pi_nt, PAIR)[1]


@pytest.mark.parametrize(
    "pair, message",
    [
        ({"premise": "", "hypothesis": "Animals move."}, "premise is empty"),
        ({"premise": "A dog.", "hypothesis": "   "}, "hypothesis is empty"),
        ({"premise": "A dog."}, "hypothesis must be a string"),
        ({"premise": ["A", "dog"], "hypothesis": "x"}, "premise must be a string"),
        ({"premise": "dog " * 6000, "hypothesis": "x"}, "premise is too long"),
    ],
)
def test_bad_pairs_get_errors(full_spinn, pair, message):
    status, output = predict(full_spinn, pair)
    assert status == 200 and message in output["error"]


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
    assert "error" in json.loads(post(full_spinn, "/predict", b"[1, 2]")[1])
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
    assert status == 200 and "premise is empty" in page and "<svg" not in page


def test_the_page_runs_no_scripts(full_spinn):
    with urllib.request.urlopen(full_spinn.url, timeout=60) as response:
        policy = response.headers["Content-Security-Policy"]
        page = response.read().decode("utf-8")
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "<script" not in page and 'id="premise"' in page and 'id="submit"' in page
