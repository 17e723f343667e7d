from spinn_allennlp.classification.dataset_readers.listops import ListOpsReader

__all__ = ["ListOpsReader"]
