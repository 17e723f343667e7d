"""The demo's web server: one page where a person types a premise and a hypothesis (or, for a
single-sentence classifier, a sentence) and sees the label probabilities and the trees, each
with the source that made it.

Python's `http.server`, no framework. `GET /` is the page; `POST /` (the page's form) answers
with the page and the prediction drawn; `POST /predict` takes and returns JSON
(`{"premise": ..., "hypothesis": ...}`, or `{"sentence": ...}` for a single-sentence model ->
the prediction, `{"error": ...}` for input it can't use). Models served: NLI archives (reader
`snli_transitions`: `spinn_nli`, `esim`, ...) and single-sentence classifiers (reader
`text_classification_transitions` with `spinn_classifier`, or AllenNLP's
`text_classification_json` with `basic_classifier`); any other archive is refused at start
with a message saying why. Predictions run one at a time (a lock): the model is not shared
between threads. Bad input — missing, empty or very long sentences, characters the vocabulary
or a parser has never seen, a tree source failing on a sentence, a malformed request — gets an
error message with a 4xx status (400: a malformed or incomplete request; 422: well formed, but
the model's reader cannot use it), a fault of the server a 500; never a crash of the server.
"""

import argparse
import html
import json
import logging
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional, Sequence, Tuple
from urllib.parse import parse_qs

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import sanitize
from allennlp.data import DatasetReader
from allennlp.data.dataset_readers import TextClassificationJsonReader
from allennlp.models import Model
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spinn_allennlp import plugin  # noqa: F401  (registers the archive's components)
from spinn_allennlp.classification.dataset_readers import TextClassificationTransitionsReader
from spinn_allennlp.data.dataset_readers import TreeDatasetReader
from spinn_allennlp.data.trees import readable_tree
from spinn_allennlp.demo.render import page, prediction_html
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.modules.tree_encoder import DEFAULT_TREE
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.pair_classification.predictors.spinn_nli import (
    SpinnNliPredictor,
    tree_source_from,
)
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules
from spinn_core.transitions import balanced_transitions

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 200_000  # a request larger than this is refused unread
MAX_SENTENCE_CHARS = 20_000  # ~3,000 words: enough for any real sentence
TITLE = "SPINN: label and trees of a sentence pair"
SENTENCE_TITLE = "SPINN: label and tree of a sentence"


def parse_tree_source(value: Optional[str]) -> Any:
    """`--tree-source` as the predictor takes it: a registered name (`benepar`, `balanced`,
    `none`, ...) or its parameters as JSON (`{"type": "spinn", "archive": "..."}`)."""
    if value is None:
        return None
    return json.loads(value) if value.lstrip().startswith("{") else value


PAIR = ("premise", "hypothesis")
SENTENCE = ("sentence",)
# The names each input goes by in a request (the predictor's own: SNLI's `sentence1` and
# `sentence2` too), first the demo's.
ALIASES = {"premise": ("premise", "sentence1"), "hypothesis": ("hypothesis", "sentence2")}


class SentencePredictor:
    """A single-sentence classifier's prediction in the demo's terms: `label`, `label_probs`
    (label -> probability) and, when the model reports it (`spinn_classifier`), the sentence's
    tree as `sentence_tree` and `sentence_transitions_source`. The reader's
    `text_to_instance(sentence)` makes the instance; a `ValueError` from it is an input error
    (`{"error": ...}`).

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader) -> None:
        self.reader = dataset_reader
        # AllenNLP's own text classifier predictor (indexes and predicts the instance).
        self.predictor = Predictor.by_name("text_classifier")(model, dataset_reader)
        self.labels = model.vocab.get_index_to_token_vocabulary(
            getattr(model, "_label_namespace", "labels")
        )
        # AllenNLP's basic_classifier keeps its encoder as `_seq2vec_encoder`.
        encoder = getattr(model, "_seq2vec_encoder", None)
        self.composes_balanced_trees = isinstance(encoder, SpinnEncoder) and not encoder.has_parser

    def predict_json(self, inputs: Dict[str, Any]) -> Dict[str, Any]:
        try:
            instance = self.reader.text_to_instance(inputs["sentence"])
        except ValueError as error:  # MalformedExampleError, a tree source's TreeSourceError
            return {"error": str(error)}
        output = sanitize(self.predictor.predict_instance(instance))
        result: Dict[str, Any] = {"label": output.get("label")}
        if isinstance(output.get("probs"), list):
            result["label_probs"] = {
                self.labels.get(index, str(index)): prob
                for index, prob in enumerate(output["probs"])
            }
        if isinstance(output.get("tree"), str):
            result["sentence_tree"] = output["tree"]
            result["sentence_transitions_source"] = output.get("transitions_source")
        elif self.composes_balanced_trees and "tokens" in instance.fields:
            # A model that reports no tree (basic_classifier) around a `spinn` encoder without
            # a parser: given no transitions, the encoder composed the balanced tree of the
            # tokens.
            tokens = [token.text for token in instance["tokens"].tokens]  # type: ignore[attr-defined]
            result["sentence_tree"] = readable_tree(tokens, balanced_transitions(len(tokens)))
            result["sentence_transitions_source"] = DEFAULT_TREE
        return result


def load_predictor(
    archive_file: str, tree_source: Optional[str] = None, cuda_device: int = -1
) -> Tuple[Any, Tuple[str, ...]]:
    """The archive's predictor and the inputs it takes (`PAIR` or `SENTENCE`), with trees for
    raw text from `tree_source` (None: the archive's own). Raises `ConfigurationError` for an
    archive the demo cannot serve, saying why."""
    archive = load_archive(archive_file, cuda_device=cuda_device)
    reader = archive.validation_dataset_reader
    source = tree_source_from(parse_tree_source(tree_source)) if tree_source is not None else None
    if isinstance(reader, SnliTransitionsReader):
        if tree_source is not None:
            reader.tree_source = source
        return SpinnNliPredictor(archive.model, reader), PAIR
    if isinstance(reader, (TextClassificationTransitionsReader, TextClassificationJsonReader)):
        if tree_source is not None:
            with configuration_errors():
                rules.check_tree_source_reader(
                    "--tree-source", type(reader).__name__, isinstance(reader, TreeDatasetReader)
                )
            assert isinstance(reader, TreeDatasetReader)  # (checked: for mypy)
            reader.tree_source = source
        return SentencePredictor(archive.model, reader), SENTENCE
    raise ConfigurationError(
        f"the demo serves NLI models (reader snli_transitions) and single-sentence classifiers "
        f"(readers text_classification_transitions, text_classification_json); this archive's "
        f"reader is {type(reader).__name__} (model {type(archive.model).__name__}). Use "
        f"`allennlp predict` for it."
    )


class DemoApp:
    """What the server does, without the HTTP: predicts an input and draws the page.

    # Parameters

    predictor : `Any`
        Has `predict_json(inputs)`: the `spinn_nli` predictor, or a `SentencePredictor`.
    description : `str`, optional
        Shown above the form (e.g. the archive and the tree source).
    fields : `Tuple[str, ...]`, optional (default = `PAIR`)
        The inputs the predictor takes: `PAIR` (premise, hypothesis) or `SENTENCE`.
    """

    def __init__(
        self, predictor: Any, description: str = "", fields: Tuple[str, ...] = PAIR
    ) -> None:
        self.predictor = predictor
        self.description = description
        self.fields = fields
        self._lock = threading.Lock()

    def predict(self, request: Dict[str, Any]) -> Tuple[int, Dict[str, Any]]:
        """(HTTP status, the prediction or `{"error": ...}`) for one request's inputs; never
        raises. 400: an input missing, not a string, empty or too long; 422: the predictor
        cannot use the input; 500: the prediction failed."""
        # Everything the request holds goes on to the predictor (its parses, ...), as the
        # predictor takes it; the sentences, under either of their names, are checked here.
        inputs = dict(request)
        for name in self.fields:
            key = next((k for k in ALIASES.get(name, (name,)) if k in request), name)
            text = request.get(key)
            if text is None:
                return HTTPStatus.BAD_REQUEST, {"error": f"the {name} is missing"}
            if not isinstance(text, str):
                return HTTPStatus.BAD_REQUEST, {"error": f"the {name} must be a string"}
            if not text.strip():
                return HTTPStatus.BAD_REQUEST, {"error": f"the {name} is empty"}
            if len(text) > MAX_SENTENCE_CHARS:
                return HTTPStatus.BAD_REQUEST, {
                    "error": f"the {name} is too long ({len(text):,} characters; "
                    f"at most {MAX_SENTENCE_CHARS:,})"
                }
            inputs[key] = text
        try:
            with self._lock:
                output = self.predictor.predict_json(inputs)
        except Exception as error:  # the predictor turns bad input into errors; this is a bug
            logger.exception("prediction failed")
            return HTTPStatus.INTERNAL_SERVER_ERROR, {
                "error": f"prediction failed: {type(error).__name__}: {error}"
            }
        if "error" not in output:
            return HTTPStatus.OK, output
        message = str(output["error"])
        # The predictor's own failures (a model or reader fault) vs inputs it refuses.
        if message.startswith(("prediction failed", "unexpected ")):
            return HTTPStatus.INTERNAL_SERVER_ERROR, output
        return HTTPStatus.UNPROCESSABLE_ENTITY, output

    def page(self, inputs: Optional[Dict[str, str]] = None, result: str = "") -> str:
        """The page: the form (holding the last inputs) and, after a submission, its result."""
        inputs = inputs or {}
        boxes = "".join(
            f'<p><label for="{name}">{name.capitalize()}</label><br>'
            f'<textarea id="{name}" name="{name}" rows="2">'
            f"{html.escape(inputs.get(name, ''))}</textarea></p>"
            for name in self.fields
        )
        form = (
            f'<p class="about">{html.escape(self.description)}</p>'
            f'<form method="post" action="/" id="{"pair" if self.fields == PAIR else "sentence"}'
            f'-form">{boxes}<p><button type="submit" id="submit">Predict</button></p></form>'
        )
        title = TITLE if self.fields == PAIR else SENTENCE_TITLE
        return page(title, form + f'<div id="result">{result}</div>')

    def result_html(self, prediction: Dict[str, Any]) -> str:
        return prediction_html(prediction, sides=self.fields)


class DemoHandler(BaseHTTPRequestHandler):
    server: "DemoServer"
    server_version = "spinn-demo"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        logger.info("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: str, content_type: str) -> None:
        try:
            self._write(status, body, content_type)
        except (BrokenPipeError, ConnectionResetError):
            # The client left before the answer: nothing to answer, nothing went wrong here.
            logger.info("%s left before the answer was sent", self.address_string())

    def _write(self, status: int, body: str, content_type: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        self.end_headers()
        self.wfile.write(data)

    def _error_page(self, status: int, message: str) -> None:
        result = self.server.app.result_html({"error": message})
        self._send(status, self.server.app.page(result=result), "text/html")

    def _read_body(self) -> Tuple[Optional[bytes], str]:
        """The request's body, or None and why not."""
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return None, "the request has no valid Content-Length"
        if length < 0 or length > MAX_BODY_BYTES:
            return None, f"the request is too large ({length:,} bytes; at most {MAX_BODY_BYTES:,})"
        return self.rfile.read(length), ""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.split("?")[0] != "/":
            self._error_page(HTTPStatus.NOT_FOUND, f"no page {self.path}")
            return
        self._send(HTTPStatus.OK, self.server.app.page(), "text/html")

    def do_POST(self) -> None:  # noqa: N802
        try:
            self._post()
        except Exception as error:  # keep serving whatever happens to one request
            logger.exception("request failed")
            self._error_page(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(error).__name__}: {error}")

    def _post(self) -> None:
        route = self.path.split("?")[0]
        if route not in ("/", "/predict"):
            self._error_page(HTTPStatus.NOT_FOUND, f"no page {self.path}")
            return
        body, problem = self._read_body()
        app = self.server.app
        if route == "/predict":
            if body is None:
                self._send(
                    HTTPStatus.BAD_REQUEST, json.dumps({"error": problem}), "application/json"
                )
                return
            try:
                request = json.loads(body.decode("utf-8"))
            except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
                self._send(
                    HTTPStatus.BAD_REQUEST,
                    json.dumps({"error": f"bad JSON: {error}"}),
                    "application/json",
                )
                return
            if not isinstance(request, dict):
                self._send(
                    HTTPStatus.BAD_REQUEST,
                    json.dumps({"error": "the request must be a JSON object"}),
                    "application/json",
                )
                return
            status, output = app.predict(request)
            self._send(status, json.dumps(output), "application/json")
            return
        if body is None:
            self._error_page(HTTPStatus.BAD_REQUEST, problem)
            return
        fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        inputs = {name: fields[name][0] for name in app.fields if name in fields}
        status, output = app.predict(inputs)
        self._send(status, app.page(inputs, app.result_html(output)), "text/html")


class DemoServer(ThreadingHTTPServer):
    """A `ThreadingHTTPServer` serving a `DemoApp` (`port` 0: any free port, see
    `server_address`)."""

    daemon_threads = True

    def __init__(self, app: DemoApp, host: str = "127.0.0.1", port: int = 8000) -> None:
        super().__init__((host, port), DemoHandler)
        self.app = app

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        return f"http://{host}:{port}/"


def build_server(argv: Optional[Sequence[str]] = None) -> DemoServer:
    """The server the command line describes, bound but not yet serving."""
    parser = argparse.ArgumentParser(
        prog="python -m spinn_allennlp.demo",
        description="Serve a page that shows a model's label probabilities and trees.",
    )
    parser.add_argument(
        "archive",
        help="a model.tar.gz of an NLI model (e.g. out/spinn) or of a single-sentence classifier",
    )
    parser.add_argument("--port", type=int, default=8000, help="0: any free port")
    parser.add_argument("--host", default="127.0.0.1", help="0.0.0.0 to serve other machines")
    parser.add_argument(
        "--tree-source",
        default=None,
        help='trees for raw text: a name ("benepar", "balanced", "none": the model decides, ...)'
        ' or JSON parameters (\'{"type": "spinn", "archive": "..."}\'); default: the archive\'s',
    )
    parser.add_argument("--cuda-device", type=int, default=-1)
    args = parser.parse_args(argv)
    predictor, fields = load_predictor(args.archive, args.tree_source, args.cuda_device)
    source = args.tree_source or "the archive's own"
    description = f"Model: {args.archive}. Trees for raw text: {source}."
    return DemoServer(DemoApp(predictor, description, fields), args.host, args.port)


def main(argv: Optional[Sequence[str]] = None) -> int:
    # Requests and our warnings; AllenNLP's parameter-by-parameter loading log stays quiet.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("spinn_allennlp").setLevel(logging.INFO)
    try:
        server = build_server(argv)
    except ConfigurationError as error:  # an archive the demo cannot serve: say why, no trace
        print(f"spinn-demo: {error}", file=sys.stderr)
        return 2
    print(f"serving on {server.url} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
