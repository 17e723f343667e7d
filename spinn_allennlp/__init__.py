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
`sys.meta_path` that watches for the `allennlp` package; once AllenNLP's own `__init__` has run
(and any module of ours that imported it has finished), it imports `spinn_allennlp.plugin` and
removes itself. A program that never imports AllenNLP never loads it because of us.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any, Optional, Sequence

from spinn_allennlp.dependency_warnings import hide_dependency_warnings

__version__ = "0.2.0"

# Before AllenNLP loads: its dependencies' warnings that no user can act on (torchvision's image
# extension, fairscale's and AllenNLP's deprecated torch.cuda.amp calls) stay hidden.
hide_dependency_warnings()

PLUGIN = "spinn_allennlp.plugin"


class RegisterWhenAllenNLPLoads(importlib.abc.MetaPathFinder):
    """Watches the imports of the `allennlp` package and of this package's modules (through
    their loaders, see `WatchingLoader`) and imports `spinn_allennlp.plugin` at the first moment
    both hold: AllenNLP's package is loaded, and none of our modules is half-way through its
    own import (one of ours importing AllenNLP must finish before the plugin imports it again).
    Then it leaves `sys.meta_path`."""

    def __init__(self) -> None:
        # How many of the watched modules are executing right now (nested imports).
        self.depth = 0

    def find_spec(
        self,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != "allennlp" and not fullname.startswith(__name__ + "."):
            return None
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = WatchingLoader(spec.loader, self)
                return spec
        return None

    def register_if_ready(self) -> None:
        if self.depth == 0 and "allennlp" in sys.modules and self in sys.meta_path:
            sys.meta_path.remove(self)
            importlib.import_module(PLUGIN)


class WatchingLoader(importlib.abc.Loader):
    """A module's own loader, with `RegisterWhenAllenNLPLoads` told when its execution starts
    and ends; every other attribute is the own loader's. The module is left as if loaded by its
    own loader alone (`__loader__`, `__spec__.loader`)."""

    def __init__(self, loader: importlib.abc.Loader, finder: RegisterWhenAllenNLPLoads) -> None:
        self.loader = loader
        self.finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[ModuleType]:
        return self.loader.create_module(spec)

    def __getattr__(self, name: str) -> Any:
        # Whatever else the module's own loader offers (`get_code`, which `python -m` asks for,
        # `get_source`, `is_package`, `get_data`, ...) is that loader's.
        if name == "loader":  # not set yet (e.g. while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.loader, name)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.finder.depth += 1
        try:
            self.loader.exec_module(module)
        finally:
            self.finder.depth -= 1
        self.finder.register_if_ready()


if "allennlp" in sys.modules:
    importlib.import_module(PLUGIN)
elif not any(isinstance(finder, RegisterWhenAllenNLPLoads) for finder in sys.meta_path):
    sys.meta_path.insert(0, RegisterWhenAllenNLPLoads())
