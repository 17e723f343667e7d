from spinn_allennlp.data.tokenizers.ptb_tokenizer import PtbSpacyTokenizer

__all__ = ["PtbSpacyTokenizer"]
