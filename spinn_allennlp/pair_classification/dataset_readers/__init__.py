from spinn_allennlp.pair_classification.dataset_readers.snli_transitions import (
    SnliTransitionsReader,
)

__all__ = ["SnliTransitionsReader"]
