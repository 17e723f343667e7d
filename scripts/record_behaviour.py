"""What every shipped config's model computes, recorded so that a redesign can show it changed
nothing: each config built at the suite's small sizes from the same seed, in float64, on the
first lines of its task's fixture sample, in evaluation (outputs: logits, probabilities,
trees) and in training (the loss and every parameter's gradient, the random generators seeded,
so that sampling and mixing policies draw the same moves).

    PYTHONPATH=<a checkout> .venv/bin/python scripts/record_behaviour.py OUT.json

records the code found first on the path (run from a checkout of the old commit to record the
baseline that tests/behaviour/test_behaviour_unchanged.py compares against). Uses nothing but
configs, `Model.from_params` and `forward`: what both the old and the new code take.
"""

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

import spinn_allennlp.plugin  # noqa: F401  (registers everything)

# The repository root on the path: its suite helpers (tools/testing) are not installed. A
# checkout from before issue 58 (5ebe5b0, the baseline) had them in the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
try:
    from tools.testing import configs  # noqa: E402
except ImportError:
    from spinn_allennlp.testing import configs  # type: ignore[no-redef]  # noqa: E402

LINES = 8
# The configs the baseline covers, as (name, config path, overrides, data): every shipped
# variant of every task at the suite's small sizes.


def variants() -> List[Tuple[str, Path, Dict[str, Any], str]]:
    found: List[Tuple[str, Path, Dict[str, Any], str]] = []
    for name in configs.LISTOPS_VARIANTS:
        found.append(
            (
                f"listops_{name}",
                configs.listops_config(name),
                configs.listops_small_overrides(name),
                str(configs.LISTOPS_SAMPLE),
            )
        )
    for name in configs.SNLI_ENCODER_SIZES:
        found.append(
            (
                f"snli_{name}",
                configs.snli_config(name),
                configs.snli_small_overrides(name),
                str(configs.SNLI_SAMPLE),
            )
        )
    for name in configs.ATTENTION_MODEL_SIZES:
        found.append(
            (
                f"snli_{name}",
                configs.snli_config(name),
                configs.attention_small_overrides(name),
                str(configs.SNLI_SAMPLE),
            )
        )
    for setting in ("fine", "binary"):
        for encoder in ("spinn_pi_nt", "spinn_pi", "spinn", "child_sum", "lstm", "bilstm"):
            found.append(
                (
                    f"sst_{setting}_{encoder}",
                    configs.sst_config(setting, encoder),
                    configs.sst_small_overrides(encoder),
                    str(configs.SST_SAMPLE),
                )
            )
    for encoder in ("spinn_pi_nt", "child_sum", "lstm"):
        found.append(
            (
                f"sick_{encoder}",
                configs.sick_config(encoder),
                configs.sick_small_overrides(encoder),
                f"{configs.SICK_SAMPLE}#TRAIN",
            )
        )
    return found


def _floats(value: Any) -> Any:
    """Tensors as (nested) lists of Python numbers: float64 values as repr-exact floats."""
    if isinstance(value, torch.Tensor):
        return value.detach().double().tolist() if value.is_floating_point() else value.tolist()
    return None


def record_one(config: Path, overrides: Dict[str, Any], data: str) -> Dict[str, Any]:
    params = Params.from_file(str(config), json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = []
    for instance in reader.read(data):
        instances.append(instance)
        if len(instances) == LINES:
            break
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model")).double()
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    result: Dict[str, Any] = {}
    model.eval()
    torch.manual_seed(1)
    with torch.no_grad():
        output = model(**tensors)
    result["evaluation"] = {
        key: _floats(value) for key, value in output.items() if _floats(value) is not None
    }
    model.train()
    torch.manual_seed(2)
    output = model(**tensors)
    output["loss"].backward()
    result["loss"] = float(output["loss"].detach())
    # What the encoder added to that loss (its `encoder_*` metrics; none before issue 81 put
    # them on the model's books).
    result["encoder_losses"] = {
        name: value for name, value in model.get_metrics().items() if name.startswith("encoder_")
    }
    result["gradients"] = {
        name: [float(p.grad.sum()), float(p.grad.abs().sum())]
        for name, p in model.named_parameters()
        if p.grad is not None
    }
    return result


def record() -> Dict[str, Any]:
    torch.set_num_threads(1)
    return {
        name: record_one(config, overrides, data) for name, config, overrides, data in variants()
    }


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.write_text(json.dumps(record(), sort_keys=True), encoding="utf-8")
    print(f"{out}: {out.stat().st_size:,} bytes")
