"""Where the repository's fixtures and configs are, for tests run from a checkout."""

import importlib.util
from pathlib import Path
from types import ModuleType

# The repository root (the package is installed in editable mode for development).
PROJECT_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_ROOT = PROJECT_ROOT / "fixtures"
CONFIGS_ROOT = PROJECT_ROOT / "training_config"


def load_script(relative_path: str) -> ModuleType:
    """A script of the repository (``"scripts/experiments.py"``, ``"benchmarks/..."``) imported
    as a module, so a test can call its functions; scripts are not a package."""
    path = PROJECT_ROOT / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
