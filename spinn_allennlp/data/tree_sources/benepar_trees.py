"""Trees from the Berkeley Neural Parser (benepar), binarized."""

import logging
from pathlib import Path
from typing import Any, List, Optional, Sequence, Union

from spinn_allennlp.data.binarization import FACTORINGS, binary_transitions
from spinn_allennlp.data.tree_sources.tree_source import TreeSource, TreeSourceError

logger = logging.getLogger(__name__)

# Models trained by this project (scripts/train_benepar.py), found by name: "benepar_snli_1pct"
# is models/benepar_snli_1pct.pt of the repository.
MODELS_DIR = Path(__file__).resolve().parents[3] / "models"
DEFAULT_MODEL = "benepar_snli_1pct"


def resolve_benepar_model(model: str) -> str:
    """A path for `benepar.Parser`: an existing file or directory as it is; a name of a model in
    `models/` (`"benepar_snli_1pct"` -> `models/benepar_snli_1pct.pt`); any other name as it
    is, for benepar to find among its downloaded models (`"benepar_en3"`, after
    `benepar.download("benepar_en3")`)."""
    if Path(model).exists():
        return model
    for candidate in (MODELS_DIR / model, MODELS_DIR / f"{model}.pt"):
        if candidate.exists():
            return str(candidate)
    return model


def import_benepar() -> Any:
    """benepar, an optional dependency (the extra "benepar"), imported when a tree is first
    needed: it imports transformers and torch-struct, which take seconds."""
    try:
        import benepar
    except ImportError as error:
        raise ImportError(
            'the tree source "benepar" needs the benepar package: '
            "pip install 'spinn_allennlp[benepar]' (or pip install benepar==0.2.0)"
        ) from error
    return benepar


@TreeSource.register("benepar")
class BeneparTrees(TreeSource):
    """Trees from a benepar (Kitaev and Klein 2018) constituency parser, through the `benepar`
    package's own `benepar.Parser`.

    The reader's tokens go to the parser as they are (PTB-escaped in the output tree, unescaped
    for its character model, spacing guessed as benepar does for English). The labeled n-ary
    tree it returns is turned into a binary tree over the same tokens: unary chains collapse and
    nodes of three or more children are binarized head-outward, the convention of SNLI's binary
    parses (see `spinn_allennlp/data/binarization.py` for the rules and why).

    A sentence the parser can't take gets a `TreeSourceError` of its own, the rest of its batch
    goes on: longer than the model's positions allow (`encoder_max_len - 2` words; our SNLI
    model was trained on sentences of at most 82 words, so long ones parse, but badly), or a word
    that is empty or blank (benepar's character model fails on it). Characters the model never saw
    are its unknown character. The model is loaded on first use.

    Registered as a `TreeSource` with name "benepar".

    # Parameters

    model : `str`, optional (default = `"benepar_snli_1pct"`)
        A model file or directory, the name of one in the repository's `models/`, or a benepar
        model name such as `"benepar_en3"` (downloaded beforehand with
        `python -c 'import benepar; benepar.download("benepar_en3")'`).
    binarization : `str`, optional (default = `"head"`)
        `"head"` (head-outward, as SNLI's binary parses), `"right"` or `"left"` factoring.
    batch_size : `int`, optional (default = `64`)
        Sentences per parser call.
    language_code : `str`, optional (default = `"en"`)
        benepar's language, which decides how spacing between words is guessed. Given, since
        benepar guesses it from labels our model doesn't have (WHNP, ...).
    """

    name = "benepar"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        binarization: str = "head",
        batch_size: int = 64,
        language_code: str = "en",
    ) -> None:
        if binarization not in FACTORINGS:
            raise ValueError(f"binarization must be one of {FACTORINGS}, got {binarization!r}")
        self.model = model
        self.binarization = binarization
        self.batch_size = batch_size
        self.language_code = language_code
        self._parser: Any = None
        self._max_words: Optional[int] = None

    @property
    def parser(self) -> Any:
        """The `benepar.Parser`, loaded on first use."""
        if self._parser is None:
            benepar = import_benepar()
            path = resolve_benepar_model(self.model)
            try:
                self._parser = benepar.Parser(
                    path, batch_size=self.batch_size, language_code=self.language_code
                )
            except LookupError as error:
                raise ValueError(
                    f"benepar model {self.model!r} not found (looked for a file, a model in "
                    f"{MODELS_DIR}, and a downloaded benepar model): {error}"
                ) from error
            chart_parser = getattr(self._parser, "_parser", None)
            hparams = getattr(chart_parser, "config", {}).get("hparams", {})
            if hparams.get("use_encoder") and hparams.get("encoder_max_len"):
                self._max_words = int(hparams["encoder_max_len"]) - 2
            logger.info("benepar model %s loaded from %s", self.model, path)
        return self._parser

    @property
    def max_words(self) -> Optional[int]:
        """The longest sentence the model takes (None: no limit known)."""
        _ = self.parser
        return self._max_words

    def transitions_batch(self, sentences: Sequence[Sequence[str]]) -> List[List[int]]:
        for tokens in sentences:
            self._check(tokens)
        # benepar.Parser cannot take an empty sentence: those get their empty tree here.
        to_parse = [list(tokens) for tokens in sentences if tokens]
        trees = iter(self.parser.parse_sents([self._input(tokens) for tokens in to_parse]))
        results: List[List[int]] = []
        for tokens in sentences:
            if not tokens:
                results.append([])
                continue
            words, transitions = binary_transitions(next(trees), self.binarization)
            if len(words) != len(tokens):
                raise TreeSourceError(
                    f"benepar's tree has {len(words)} words for a sentence of {len(tokens)}"
                )
            results.append(transitions)
        return results

    def transitions_or_errors(
        self, sentences: Sequence[Sequence[str]]
    ) -> List[Union[List[int], TreeSourceError]]:
        # Sentences known to fail are answered before the batch goes to the parser, so that
        # they don't send the whole batch down the one-at-a-time path.
        results: List[Union[List[int], TreeSourceError, None]] = []
        to_parse: List[Sequence[str]] = []
        for tokens in sentences:
            try:
                self._check(tokens)
            except TreeSourceError as error:
                results.append(error)
                continue
            results.append(None)
            to_parse.append(tokens)
        parsed = iter(super().transitions_or_errors(to_parse) if to_parse else [])
        return [next(parsed) if result is None else result for result in results]

    def _check(self, tokens: Sequence[str]) -> None:
        for position, token in enumerate(tokens):
            if not token.strip():
                raise TreeSourceError(f"benepar can't parse an empty word (word {position + 1})")
        if self.max_words is not None and len(tokens) > self.max_words:
            raise TreeSourceError(
                f"sentence of {len(tokens)} words; benepar model {self.model!r} takes at most "
                f"{self.max_words}"
            )

    def _input(self, tokens: List[str]) -> Any:
        benepar = import_benepar()
        from benepar.ptb_unescape import guess_space_after, ptb_unescape

        return benepar.InputSentence(
            words=ptb_unescape(tokens),
            space_after=guess_space_after(tokens),
            escaped_words=list(tokens),
        )
