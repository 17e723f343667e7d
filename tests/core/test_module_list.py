"""`spinn_core`'s docstring lists its modules: every one of them, and no module that does not
exist (an earlier docstring named four that had been folded into others)."""

import re

import spinn_core
from spinn_core.testing import PROJECT_ROOT

CORE = PROJECT_ROOT / "spinn_core"


def test_the_docstring_names_every_module_of_the_core_and_only_real_ones():
    doc = spinn_core.__doc__ or ""
    modules = {path.stem for path in CORE.glob("*.py") if path.stem != "__init__"}
    packages = {path.name for path in CORE.iterdir() if (path / "__init__.py").is_file()}
    named = set(re.findall(r"``(\w+)``", doc))
    listed = set(re.findall(r"^\* ``(\w+)``", doc, flags=re.MULTILINE))
    assert (modules | packages) - named == set(), "modules the docstring leaves out"
    assert listed - (modules | packages) == set(), "listed modules that do not exist"
