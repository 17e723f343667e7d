import pickle

from allennlp.common import Params
from allennlp.data import Tokenizer

from spinn_allennlp.data.tokenizers import PtbSpacyTokenizer


def test_registered_and_ptb_like():
    tokenizer = Tokenizer.from_params(Params({"type": "ptb_spacy"}))
    assert isinstance(tokenizer, PtbSpacyTokenizer)
    words = [t.text for t in tokenizer.tokenize('A man in a tee-shirt (red) says "cheese".')]
    assert words == [
        "A",
        "man",
        "in",
        "a",
        "tee-shirt",
        "-LRB-",
        "red",
        "-RRB-",
        "says",
        "``",
        "cheese",
        "''",
        ".",
    ]


def test_lowercase_whitespace_and_empty():
    tokenizer = PtbSpacyTokenizer(lowercase=True)
    assert tokenizer.words("  Two   Dogs\trun.\n") == ["two", "dogs", "run", "."]
    assert tokenizer.words("") == [] and tokenizer.words(" \n ") == []


def test_pickles_for_worker_processes():
    tokenizer = PtbSpacyTokenizer()
    tokenizer.words("warm up")  # builds the spaCy object
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert copy.words("It's fine.") == tokenizer.words("It's fine.") == ["It", "'s", "fine", "."]
