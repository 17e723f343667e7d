from spinn_allennlp.relatedness.dataset_readers.sick import SickReader

__all__ = ["SickReader"]
