"""The warnings of AllenNLP's dependencies that reach every user and that no user can act on,
and the filters that hide them (nothing else is hidden):

* torchvision's "Failed to load image Python extension" (a UserWarning when `import
  allennlp.data` loads torchvision next to a CPU torch; this project never reads images);
* fairscale's use of `torch.cuda.amp.custom_fwd/custom_bwd`, deprecated by torch (FutureWarnings
  when AllenNLP's training code imports fairscale), and its `torch.jit.script` at import (a
  FutureWarning since torch 2.14, attributed to torch's own `torch.jit._script`, so the filter
  hides that notice for any caller in the environment);
* AllenNLP's trainer's use of `torch.cuda.amp.autocast` / `GradScaler` (FutureWarnings at every
  training and validation epoch);
* setuptools' notice that `pkg_resources` is deprecated (a UserWarning when Google's client
  libraries, imported by AllenNLP's `cached_path`, or py-rouge, of allennlp-models, import it:
  the locks keep setuptools < 81 because py-rouge cannot work without it);
* torch's notice that torch-struct's `TreeCRF` "does not define `arg_constraints`" (a
  UserWarning at every parse of benepar, whose chart decoder builds one per batch: every
  `predict` and `evaluate` of an archive with the benepar tree source).

`spinn_allennlp/__init__.py` applies them, so a program that imports this package before
AllenNLP (the demo, a Python user) never sees them. The `allennlp` command imports AllenNLP
before any plugin, so for it the installed package also ships `spinn_allennlp_warnings.pth`
(written by setup.py from `HIDDEN`), a start-up file Python runs in every interpreter of that
environment: it applies the same filters and imports nothing else. Standard library only.
"""

import warnings
from typing import List, Tuple, Type

# (category, message regex, module regex): what `warnings.filterwarnings` takes.
HIDDEN: List[Tuple[Type[Warning], str, str]] = [
    (UserWarning, r"Failed to load image Python extension", r"torchvision"),
    (
        FutureWarning,
        r"`torch\.cuda\.amp\.custom_(fwd|bwd)\(args\.\.\.\)` is deprecated",
        r"fairscale",
    ),
    (FutureWarning, r"`torch\.jit\.script` is deprecated", r"torch\.jit"),
    (
        FutureWarning,
        r"`torch\.cuda\.amp\.(autocast|GradScaler)\(args\.\.\.\)` is deprecated",
        r"allennlp",
    ),
    (UserWarning, r"pkg_resources is deprecated as an API", r"google\.rpc|rouge"),
    (UserWarning, r".*does not define `arg_constraints`", r"torch_struct"),
]


def hide_dependency_warnings() -> None:
    """Ignores exactly the warnings in `HIDDEN` from here on."""
    for category, message, module in HIDDEN:
        warnings.filterwarnings("ignore", message=message, category=category, module=module)


def startup_line() -> str:
    """The one line of `spinn_allennlp_warnings.pth`: the same filters, standard library only
    (Python runs a `.pth` line that starts with `import`)."""
    filters = "; ".join(
        f"warnings.filterwarnings('ignore', message={message!r}, "
        f"category={category.__name__}, module={module!r})"
        for category, message, module in HIDDEN
    )
    return f"import warnings; {filters}\n"
