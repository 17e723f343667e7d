"""What every part of the experiments command shares: the repository's root, the AllenNLP
command, the tasks, a job's shape, reading a run's JSON files."""

import json
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
ALLENNLP = [sys.executable, "-m", "allennlp"]
TASKS = ("snli", "snli_attention", "sst", "sick", "listops")
PAGE_TASKS = (*TASKS, "parsing")
Job = Tuple[str, str, Dict]


def read_json(path: Path) -> Optional[Dict]:
    return json.loads(path.read_text()) if path.exists() else None
