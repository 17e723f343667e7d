from spinn_allennlp.classification.dataset_readers.listops import ListOpsReader
from spinn_allennlp.classification.dataset_readers.sst_trees import (
    BINARY_LABELS,
    FINE_LABELS,
    UNLABELED,
    SstTreesReader,
)
from spinn_allennlp.classification.dataset_readers.text_classification_transitions import (
    TextClassificationTransitionsReader,
)

__all__ = [
    "BINARY_LABELS",
    "FINE_LABELS",
    "UNLABELED",
    "ListOpsReader",
    "SstTreesReader",
    "TextClassificationTransitionsReader",
]
