"""spinn_allennlp: SPINN (Bowman, Gauthier et al. 2016) for AllenNLP.

`import spinn_allennlp` registers every component (encoder, readers, models, predictors, ...;
see `spinn_allennlp.plugin`), as an AllenNLP plugin package does; the AllenNLP command line
finds it through `.allennlp_plugins` or `--include-package spinn_allennlp`. The SPINN itself,
pure PyTorch, is the package `spinn_core`, which imports with torch alone.
"""

__version__ = "0.2.0"

# Before AllenNLP loads (the plugin imports it): its dependencies' warnings that no user can act
# on (torchvision's image extension, fairscale's and AllenNLP's deprecated torch.cuda.amp calls)
# stay hidden.
from spinn_allennlp.dependency_warnings import hide_dependency_warnings  # noqa: E402

hide_dependency_warnings()

from spinn_allennlp import plugin  # noqa: E402, F401  (registers everything)
