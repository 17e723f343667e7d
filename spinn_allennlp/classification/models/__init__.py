from spinn_allennlp.classification.models.spinn_classifier import SpinnClassifier

__all__ = ["SpinnClassifier"]
