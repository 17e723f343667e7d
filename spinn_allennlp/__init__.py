"""spinn_allennlp: SPINN (Bowman, Gauthier et al. 2016) for AllenNLP.

`import spinn_allennlp` is the one import a Python user needs, before or after AllenNLP: it
registers every component (encoder, readers, models, predictors, ...; see
`spinn_allennlp.plugin`) at once when AllenNLP is already loaded, and otherwise the moment
AllenNLP's package is first imported. (`import spinn_allennlp.plugin` registers at once, loading
AllenNLP itself.) The AllenNLP command line finds the plugin through `.allennlp_plugins` or
`--include-package spinn_allennlp`.

Why not import AllenNLP here and register eagerly: the pure-PyTorch core (`spinn_allennlp.core`)
and the test helpers (`spinn_allennlp.testing`) need torch alone, and importing them runs this
file first. So until AllenNLP is imported by someone, this file only leaves a finder on
`sys.meta_path` that watches for the `allennlp` package; once AllenNLP's own `__init__` has run,
it imports `spinn_allennlp.plugin` and removes itself. A program that never imports AllenNLP
never loads it because of us.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Optional, Sequence

__version__ = "0.2.0"

PLUGIN = "spinn_allennlp.plugin"


class RegisterWhenAllenNLPLoads(importlib.abc.MetaPathFinder):
    """A one-shot finder for the `allennlp` package: the module spec the other finders give,
    with a loader that registers this plugin after AllenNLP's `__init__` has run."""

    def find_spec(
        self,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != "allennlp":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = RegisteringLoader(spec.loader)
        return spec


class RegisteringLoader(importlib.abc.Loader):
    """AllenNLP's own loader, then `import spinn_allennlp.plugin`; the module is left as if
    loaded by AllenNLP's loader alone (its `__loader__` and `__spec__.loader`)."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[ModuleType]:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        # AllenNLP's package is complete (and in sys.modules): its submodules import normally.
        importlib.import_module(PLUGIN)


if "allennlp" in sys.modules:
    importlib.import_module(PLUGIN)
elif not any(isinstance(finder, RegisterWhenAllenNLPLoads) for finder in sys.meta_path):
    sys.meta_path.insert(0, RegisterWhenAllenNLPLoads())
