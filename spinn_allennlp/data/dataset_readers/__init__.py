from spinn_allennlp.data.dataset_readers.tree_dataset_reader import (
    LEFT_PAD_TOKEN,
    LeftOutByLength,
    MalformedExampleError,
    TreeDatasetReader,
    parse_json_object,
    string_field,
)

__all__ = [
    "LEFT_PAD_TOKEN",
    "LeftOutByLength",
    "MalformedExampleError",
    "TreeDatasetReader",
    "parse_json_object",
    "string_field",
]
