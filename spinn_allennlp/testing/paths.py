"""Where the repository's fixtures and configs are, for tests run from a checkout."""

from pathlib import Path

# The repository root (the package is installed in editable mode for development).
PROJECT_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_ROOT = PROJECT_ROOT / "fixtures"
CONFIGS_ROOT = PROJECT_ROOT / "training_config"
