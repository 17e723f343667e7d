"""spinn_allennlp: SPINN (Bowman et al. 2016) for AllenNLP.

``.allennlp_plugins`` imports this package non-recursively, so every module that registers
something with AllenNLP is imported here. The pure-PyTorch core (``spinn_allennlp.core``) does
not import AllenNLP.
"""
from spinn_allennlp.modules.spinn_encoder import SpinnEncoder
