from spinn_allennlp.data.ptb import comparable, escape_tokens, tokens_match_text, unescape_tokens


def test_escapes_brackets_and_alternates_quotes():
    tokens = ["a", "(", "b", ")", '"', "hi", '"', "[", "x", "]", "{", "}"]
    assert escape_tokens(tokens) == [
        "a",
        "-LRB-",
        "b",
        "-RRB-",
        "``",
        "hi",
        "''",
        "-LSB-",
        "x",
        "-RSB-",
        "-LCB-",
        "-RCB-",
    ]
    assert unescape_tokens(escape_tokens(tokens))[:4] == ["a", "(", "b", ")"]


def test_parse_words_match_their_sentence_up_to_spacing_and_quotes():
    # Real SNLI dev sentences and the words of their parses.
    assert tokens_match_text(["The", "child", "was", "happy", "`"], "The child was happy`")
    assert tokens_match_text(
        ["costume", "glasses", "-LRB-", "with", "attached", "eyebrows", "-RRB-"],
        "costume glasses (with attached eyebrows)",
    )
    assert tokens_match_text(["the", "words", "``", "HELP", "ME", "''"], 'the words "HELP ME"')
    assert not tokens_match_text(["the", "dog"], "the cat")
    assert comparable(" a  ``b'' ") == 'a"b"'


def test_text_already_in_ptb_tokens_matches_its_parse():
    """SST writes its sentences PTB-tokenized: the brackets stay escaped in the text too."""
    tokens = ["hippies", "-LRB-", "this", "one", "-RRB-", "."]
    assert tokens_match_text(tokens, "hippies -LRB- this one -RRB- .")
    assert tokens_match_text(tokens, "hippies (this one).")
    assert not tokens_match_text(tokens, "hippies -LRB- that one -RRB- .")
