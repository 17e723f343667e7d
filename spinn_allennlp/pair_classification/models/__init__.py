from spinn_allennlp.pair_classification.models.spinn_nli import SpinnNliClassifier

__all__ = ["SpinnNliClassifier"]
