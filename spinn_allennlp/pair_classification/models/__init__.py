from spinn_allennlp.pair_classification.models.enhanced_inference import EnhancedInferenceModel
from spinn_allennlp.pair_classification.models.esim import EsimNli
from spinn_allennlp.pair_classification.models.him import HimNli
from spinn_allennlp.pair_classification.models.spinn_nli import SpinnNliClassifier
from spinn_allennlp.pair_classification.models.tree_esim import TreeEsimNli

__all__ = ["EnhancedInferenceModel", "EsimNli", "HimNli", "SpinnNliClassifier", "TreeEsimNli"]
