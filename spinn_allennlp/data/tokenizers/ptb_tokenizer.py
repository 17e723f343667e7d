"""A PTB-style word tokenizer that needs no model download."""

from typing import List, Optional

import spacy
from allennlp.data.tokenizers import Token, Tokenizer
from spacy.lang.char_classes import HYPHENS

from spinn_allennlp.data.ptb import escape_tokens


@Tokenizer.register("ptb_spacy")
class PtbSpacyTokenizer(Tokenizer):
    """Splits raw text into words roughly as the Penn Treebank (and so SNLI's and SST's parses)
    does, so that words at prediction time find the vocabulary learned from parsed data.

    A blank spaCy English pipeline (`spacy.blank("en")`: rules only, no statistical model to
    download, unlike AllenNLP's `"spacy"` tokenizer), with two PTB conventions added:
    hyphenated words stay whole ("tee-shirt"), and brackets and double quotes get their PTB
    escapes (`-LRB-`, ``` `` ``` / `''`). Whitespace tokens are dropped.

    Registered as a `Tokenizer` with name "ptb_spacy".

    # Parameters

    lowercase : `bool`, optional (default = `False`)
        Lowercase every token.
    """

    def __init__(self, lowercase: bool = False) -> None:
        self._lowercase = lowercase
        self._tokenizer: Optional[spacy.tokenizer.Tokenizer] = None  # built on first use

    def _spacy_tokenizer(self) -> "spacy.tokenizer.Tokenizer":
        if self._tokenizer is None:
            nlp = spacy.blank("en")
            # spaCy splits "tee-shirt" at the hyphen; the PTB tokenizer (and SNLI) doesn't.
            tokenizer = nlp.tokenizer
            assert isinstance(tokenizer, spacy.tokenizer.Tokenizer)
            infixes = [p for p in nlp.Defaults.infixes or () if HYPHENS not in str(p)]
            tokenizer.infix_finditer = spacy.util.compile_infix_regex(infixes).finditer
            self._tokenizer = tokenizer
        return self._tokenizer

    def words(self, text: str) -> List[str]:
        """The tokens of ``text`` as strings."""
        words = [token.text for token in self._spacy_tokenizer()(text) if not token.is_space]
        words = escape_tokens(words)
        return [word.lower() for word in words] if self._lowercase else words

    def tokenize(self, text: str) -> List[Token]:
        return [Token(word) for word in self.words(text)]

    def __getstate__(self):
        # The spaCy object is rebuilt in each worker process rather than pickled.
        state = dict(self.__dict__)
        state["_tokenizer"] = None
        return state
