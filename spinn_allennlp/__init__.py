"""spinn_allennlp: SPINN (Bowman, Gauthier et al. 2016) for AllenNLP.

The pure-PyTorch core (`spinn_allennlp.core`) and the test helpers (`spinn_allennlp.testing`)
need torch alone: importing them loads no AllenNLP. The registered components (encoder, readers,
models, predictors, ...) are imported by `spinn_allennlp.plugin`, which `.allennlp_plugins`
names; `--include-package spinn_allennlp` imports them too.
"""

import sys

__version__ = "0.2.0"

# When AllenNLP is already loaded (its CLI imports plugins after itself), register everything,
# so that a plugins file naming just `spinn_allennlp` works as well.
if "allennlp" in sys.modules:
    from spinn_allennlp import plugin  # noqa: F401,E402
