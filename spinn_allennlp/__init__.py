"""spinn_allennlp: SPINN (Bowman et al. 2016) for AllenNLP.

``.allennlp_plugins`` imports this package non-recursively, so every module that registers
something with AllenNLP is imported here. The pure-PyTorch core (``spinn_allennlp.core``) does
not import AllenNLP.
"""
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
from spinn_allennlp.nli.dataset_reader import SnliTransitionsReader
from spinn_allennlp.nli.model import SpinnNliClassifier
from spinn_allennlp.nli.predictor import SpinnNliPredictor
from spinn_allennlp.training.learning_rate_schedulers import StepDecayPerBatch
