#!/usr/bin/env bash
# Re-resolves requirements/lock.txt from base.in + overrides.txt (needs `uv`). Only for
# maintainers changing dependencies; installing uses the committed lock and plain pip.
set -euo pipefail
cd "$(dirname "$0")/.."
uv pip compile requirements/base.in --override requirements/overrides.txt \
  --python-version 3.11 --find-links /opt/wheels -o requirements/lock.txt
