"""Has a latent-tree ListOps model's composition learned to compute on its own parser's trees
only? Evaluates each archive on a ListOps file three ways: on the trees its parser chooses (its
evaluation policy, greedy for the latent configs), on the gold trees given (the file's
brackets, `"evaluation_policy": {"type": "given"}`), and on the operator-last trees given
(each list's arguments and `]` folded left to right, the operator joined last, the reader's
`tree_shape: "operator_last"`: a grouping latent parsers often choose).

    .venv/bin/python scripts/evaluate_listops_given_trees.py OUT RUN_DIR [RUN_DIR ...]

RUN_DIR holds model.tar.gz (or is an archive). OUT gets `<run>_{own,gold,operator_last}.json`:
the model's metrics (with trees given, `bracket_f1` and the other parse metrics are those of
the parser's moves under teacher forcing, not of a tree it built), `lines`, and
`same_tree_as_reader`: the share of lines whose followed tree is exactly the reader's (for
`own`, the gold trees: the parser's exact-tree rate; given, 1.0 — the check that the trees
were really given); and `times.txt` (seconds each). A file already there is kept, so a cut-off
call resumes. One thread (`--threads`), on the CPU.
"""

import argparse
import json
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch
from allennlp.common.util import import_module_and_submodules
from allennlp.models.archival import load_archive

ROOT = Path(__file__).resolve().parent.parent
TEST = ROOT / "data" / "listops" / "test_d20s.tsv.gz"
GIVEN = {"model.encoder.evaluation_policy": {"type": "given"}}
OVERRIDES: Dict[str, Dict] = {
    "own": {},
    "gold": GIVEN,
    "operator_last": {**GIVEN, "validation_dataset_reader.tree_shape": "operator_last"},
}


def archive_of(run: Path) -> Path:
    return run if run.is_file() else run / "model.tar.gz"


def run_name(run: Path) -> str:
    return run.name[: -len(".tar.gz")] if run.is_file() else run.name


def evaluate(archive: Path, data: Path, trees: str, batch_size: int = 128) -> Dict:
    """The metrics of `archive` on `data` with the trees `trees` (a key of OVERRIDES)."""
    loaded = load_archive(archive, cuda_device=-1, overrides=json.dumps(OVERRIDES[trees]))
    model = loaded.model
    model.eval()
    model.get_metrics(reset=True)
    instances = list(loaded.validation_dataset_reader.read(data))
    same = 0
    with torch.no_grad():
        for start in range(0, len(instances), batch_size):
            batch = instances[start : start + batch_size]
            for output, instance in zip(model.forward_on_instances(batch), batch):
                expected = instance["transitions"].tensor.tolist()  # type: ignore[attr-defined]
                followed = output["transitions"].tolist()[: len(expected)]
                same += int(followed == expected)
    metrics = dict(model.get_metrics(reset=True))
    metrics.update(lines=len(instances), same_tree_as_reader=same / max(len(instances), 1))
    return metrics


def main(argv: Optional[Sequence[str]] = None) -> List[Path]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--data", type=Path, default=TEST, help="a ListOps file with brackets")
    parser.add_argument("--trees", nargs="+", choices=list(OVERRIDES), default=list(OVERRIDES))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    import_module_and_submodules("spinn_allennlp")
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for run in args.runs:
        for trees in args.trees:
            result = args.out / f"{run_name(run)}_{trees}.json"
            written.append(result)
            if result.exists() and result.stat().st_size:
                continue
            start = time.time()
            metrics = evaluate(archive_of(run), args.data, trees)
            result.write_text(json.dumps(metrics, indent=2) + "\n")
            with open(args.out / "times.txt", "a") as times:
                times.write(f"{run_name(run)} {trees} {time.time() - start:.0f} s\n")
    return written


if __name__ == "__main__":
    main()
