"""The demo's web server: one page where a person types a premise and a hypothesis and sees the
label probabilities and both trees, each with the source that made it.

Python's `http.server`, no framework. `GET /` is the page; `POST /` (the page's form) answers
with the page and the prediction drawn; `POST /predict` takes and returns JSON
(`{"premise": ..., "hypothesis": ...}` -> the `spinn_nli` predictor's output, `{"error": ...}`
for input it can't use). Predictions run one at a time (a lock): the model is not shared
between threads. Bad input — empty or very long sentences, characters the vocabulary or a
parser has never seen, a tree source failing on a sentence, a malformed request — gets an
error message, never a crash of the server.
"""

import argparse
import html
import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional, Sequence, Tuple
from urllib.parse import parse_qs

from allennlp.models.archival import load_archive

from spinn_allennlp import plugin  # noqa: F401  (registers the archive's components)
from spinn_allennlp.demo.render import page, prediction_html
from spinn_allennlp.pair_classification.predictors.spinn_nli import (
    SpinnNliPredictor,
    tree_source_from,
)

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 200_000  # a request larger than this is refused unread
MAX_SENTENCE_CHARS = 20_000  # ~3,000 words: enough for any real sentence
TITLE = "SPINN: label and trees of a sentence pair"


def parse_tree_source(value: Optional[str]) -> Any:
    """`--tree-source` as the predictor takes it: a registered name (`benepar`, `balanced`,
    `none`, ...) or its parameters as JSON (`{"type": "spinn", "archive": "..."}`)."""
    if value is None:
        return None
    return json.loads(value) if value.lstrip().startswith("{") else value


def load_predictor(
    archive_file: str, tree_source: Optional[str] = None, cuda_device: int = -1
) -> SpinnNliPredictor:
    """The `spinn_nli` predictor of an archive, with its trees for raw text from `tree_source`
    (None: the archive's own)."""
    archive = load_archive(archive_file, cuda_device=cuda_device)
    return SpinnNliPredictor(
        archive.model,
        archive.validation_dataset_reader,
        tree_source=tree_source_from(parse_tree_source(tree_source))
        if tree_source is not None
        else None,
    )


class DemoApp:
    """What the server does, without the HTTP: predicts a pair and draws the page.

    # Parameters

    predictor : `SpinnNliPredictor`
    description : `str`, optional
        Shown above the form (e.g. the archive and the tree source).
    """

    def __init__(self, predictor: SpinnNliPredictor, description: str = "") -> None:
        self.predictor = predictor
        self.description = description
        self._lock = threading.Lock()

    def predict(self, premise: Any, hypothesis: Any) -> Dict[str, Any]:
        """The predictor's output for one pair, or `{"error": ...}`; never raises."""
        for name, text in (("premise", premise), ("hypothesis", hypothesis)):
            if not isinstance(text, str):
                return {"error": f"the {name} must be a string"}
            if not text.strip():
                return {"error": f"the {name} is empty"}
            if len(text) > MAX_SENTENCE_CHARS:
                return {
                    "error": f"the {name} is too long ({len(text):,} characters; "
                    f"at most {MAX_SENTENCE_CHARS:,})"
                }
        try:
            with self._lock:
                return self.predictor.predict_json({"premise": premise, "hypothesis": hypothesis})
        except Exception as error:  # the predictor turns bad input into errors; this is a bug
            logger.exception("prediction failed")
            return {"error": f"prediction failed: {type(error).__name__}: {error}"}

    def page(self, premise: str = "", hypothesis: str = "", result: str = "") -> str:
        """The page: the form (holding the last pair) and, after a submission, its result."""
        form = (
            f'<p class="about">{html.escape(self.description)}</p>'
            '<form method="post" action="/" id="pair-form">'
            '<p><label for="premise">Premise</label><br>'
            '<textarea id="premise" name="premise" rows="2">'
            f"{html.escape(premise)}</textarea></p>"
            '<p><label for="hypothesis">Hypothesis</label><br>'
            '<textarea id="hypothesis" name="hypothesis" rows="2">'
            f"{html.escape(hypothesis)}</textarea></p>"
            '<p><button type="submit" id="submit">Predict</button></p></form>'
        )
        return page(TITLE, form + f'<div id="result">{result}</div>')


class DemoHandler(BaseHTTPRequestHandler):
    server: "DemoServer"
    server_version = "spinn-demo"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        logger.info("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: str, content_type: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        self.end_headers()
        self.wfile.write(data)

    def _error_page(self, status: int, message: str) -> None:
        result = prediction_html({"error": message})
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
                request = {}
            output = app.predict(request.get("premise"), request.get("hypothesis"))
            self._send(HTTPStatus.OK, json.dumps(output), "application/json")
            return
        if body is None:
            self._error_page(HTTPStatus.BAD_REQUEST, problem)
            return
        fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        premise = fields.get("premise", [""])[0]
        hypothesis = fields.get("hypothesis", [""])[0]
        result = prediction_html(app.predict(premise, hypothesis))
        self._send(HTTPStatus.OK, app.page(premise, hypothesis, result), "text/html")


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
        description="Serve a page that shows a spinn_nli archive's label probabilities and trees.",
    )
    parser.add_argument("archive", help="a model.tar.gz of an NLI model (e.g. out/spinn)")
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
    predictor = load_predictor(args.archive, args.tree_source, args.cuda_device)
    source = args.tree_source or "the archive's own"
    description = f"Model: {args.archive}. Trees for raw text: {source}."
    return DemoServer(DemoApp(predictor, description), args.host, args.port)


def main(argv: Optional[Sequence[str]] = None) -> int:
    # Requests and our warnings; AllenNLP's parameter-by-parameter loading log stays quiet.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("spinn_allennlp").setLevel(logging.INFO)
    server = build_server(argv)
    print(f"serving on {server.url} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
