"""Pure-PyTorch SPINN core: no AllenNLP import anywhere below this package."""
from spinn_allennlp.core.cells import (BufferProjection, Tracker, TreeLSTMComposition,
                                       TreeRNNComposition)
from spinn_allennlp.core.spinn import GIVEN, MIXED, PREDICTED, Spinn, SpinnOutput
from spinn_allennlp.core.tape import WriteOnceTape
from spinn_allennlp.core import transitions
