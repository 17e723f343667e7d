"""What every tree reader does with one sentence, apart from reading lines: its tokens and gold
transitions (from a binary parse checked against the text, or from a tree source), the length
limit and the paper's crop/pad mode, and the two ways a line fails (malformed, or left out)."""

from typing import List, Optional, Sequence, Tuple, Union

from allennlp.data import Token, Tokenizer

from spinn_allennlp.data.ptb import tokens_match_text
from spinn_allennlp.data.tree_sources import TreeSource, TreeSourceError
from spinn_core.transitions import MalformedParseError, crop_pad_left, parse_to_transitions

# The pad token of the paper's fixed-length mode (crop_pad_length).
LEFT_PAD_TOKEN = "@@LEFTPAD@@"

Sentence = Union[str, Sequence[str], Sequence[Token]]


class MalformedExampleError(ValueError):
    """An example that cannot become an instance.

    ``reason`` is the short category a reader counts in ``skipped``; the message adds detail.
    """

    def __init__(self, reason: str, detail: Optional[str] = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class LeftOutByLength(ValueError):
    """An example longer than the reader's `max_length`: not malformed, left out on purpose,
    counted in ``dropped`` under ``reason`` (one summary line, no line-by-line log)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


class SentenceReading:
    """The sentence handling :class:`TreeDatasetReader` gives its subclasses; it reads the
    reader's settings (``_tokenizer``, ``_lowercase``, ``tree_source``, ``_max_length``,
    ``_crop_pad_length``), which the reader's constructor checks and sets."""

    _tokenizer: Tokenizer
    _lowercase: bool
    tree_source: Optional[TreeSource]
    _max_length: Optional[int]
    _crop_pad_length: Optional[int]

    def sentence_tokens_and_transitions(
        self, name: str, sentence: Sentence, binary_parse: Optional[str] = None
    ) -> Tuple[List[str], Optional[List[int]]]:
        """Tokens and transitions of one sentence.

        With ``binary_parse`` (``"( ( The cat ) sat )"``), the parse's words are the tokens (no
        re-tokenization, so tokens and transitions always agree) and must spell ``sentence`` up
        to whitespace, PTB escapes and quote marks. Without one, a string is tokenized and a
        token list taken as it is; the transitions come from ``tree_source``, or are None
        without one. ``name`` names the sentence in errors. Raises
        :class:`MalformedExampleError` for an empty sentence, a malformed parse, a parse that
        doesn't match, or a sentence the tree source has no (valid) tree for.
        """
        words: List[str] = []
        if isinstance(sentence, str):
            text = sentence
        else:
            for item in sentence:
                word = item.text if isinstance(item, Token) else item
                if not isinstance(word, str):
                    raise MalformedExampleError(
                        "bad field", f"{name} has a token that is not a string"
                    )
                words.append(word)
            text = " ".join(words)
        if not text.strip():
            raise MalformedExampleError("empty sentence", f"{name} is empty")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            # JSON can escape a lone surrogate ("\ud800"), which is no character at all.
            raise MalformedExampleError("invalid text", f"{name}: {error.reason}") from error

        tokens: List[str]
        transitions: Optional[List[int]]
        if binary_parse is None:
            tokens = (
                [str(token.text) for token in self._tokenizer.tokenize(text)]
                if isinstance(sentence, str)
                else words
            )
            transitions = self._transitions_from_source(name, tokens)
        else:
            try:
                tokens, transitions = parse_to_transitions(binary_parse)
            except MalformedParseError as error:
                raise MalformedExampleError("malformed parse", f"{name} parse: {error}") from error
            if not tokens_match_text(tokens, text):
                raise MalformedExampleError(
                    "parse tokens don't match the sentence",
                    f"{name} parse has {' '.join(tokens)!r}, sentence is {text!r}",
                )
        if self._lowercase:
            tokens = [token.lower() for token in tokens]
        return tokens, transitions

    def _transitions_from_source(self, name: str, tokens: List[str]) -> Optional[List[int]]:
        if self.tree_source is None:
            return None
        result = self.tree_source.transitions_or_errors([tokens])[0]
        if isinstance(result, TreeSourceError):
            raise MalformedExampleError(result.reason, f"{result} (the {name})")
        return result

    def check_length(self, name: str, tokens: Sequence[str]) -> None:
        """Raises :class:`LeftOutByLength` beyond ``max_length``: the read counts the example
        as dropped ("over max_length N")."""
        if self._max_length is not None and len(tokens) > self._max_length:
            raise LeftOutByLength(
                f"over max_length {self._max_length}",
                f"{name} has {len(tokens)} tokens > max_length {self._max_length}",
            )

    def crop_pad(
        self, tokens: List[str], transitions: Optional[List[int]]
    ) -> Tuple[List[str], Optional[List[int]]]:
        """The paper's fixed length, when ``crop_pad_length`` is set; unchanged otherwise."""
        length = self._crop_pad_length
        if length is None:
            return tokens, transitions
        if transitions is None:
            # No tree to keep valid: plain left crop / pad so the length is still fixed.
            tokens = tokens[-length:]
            return [LEFT_PAD_TOKEN] * (length - len(tokens)) + tokens, None
        return crop_pad_left(tokens, transitions, length, LEFT_PAD_TOKEN)
