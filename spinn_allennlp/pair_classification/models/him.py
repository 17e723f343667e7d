import json
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union, cast

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.models.archival import CONFIG_NAME, archive_model, load_archive
from allennlp.training.metrics import CategoricalAccuracy
from torch import nn

from spinn_allennlp.pair_classification.models.readable_output import add_labels, add_readable_trees
from spinn_allennlp.settings_errors import configuration_errors
from spinn_allennlp.training.metrics import Share
from spinn_core import rules


@Model.register("him_nli")
class HimNli(Model):
    """HIM, the Hybrid Inference Model of Chen et al. (2017): NLI models whose predicted label
    probabilities are averaged (in the paper, ESIM and the syntactic tree-LSTM model,
    `esim_nli` and `tree_esim_nli`).

    The members see the same batch and keep their own parameters. Trained as one model, the
    loss is the sum of the members' losses, which trains each exactly as alone (no parameter is
    shared); the paper trained them apart and averaged afterwards, which `archive_him`
    (`scripts/make_him_archive.py`) does from trained archives.

    Output: `probs` (the average), `logits` (their log), and each member's `<name>_probs`.
    Metrics: `accuracy` of the average, each member's `<name>_accuracy`, and `oracle_accuracy`,
    the share of pairs that at least one member gets right (the paper's "oracle" score).
    Members must share the vocabulary (the same words and labels, in the same order).

    Registered as a `Model` with name "him_nli".

    # Parameters

    vocab : `Vocabulary`
    members : `Dict[str, Model]`
        The models to average, by name (e.g. `{"esim": ..., "tree": ...}`).
    label_namespace : `str`, optional (default = `"labels"`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        members: Dict[str, Model],
        label_namespace: str = "labels",
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)

        def labels_and_vocabulary(of: Vocabulary) -> Tuple[Any, Dict[str, Any]]:
            return of.get_index_to_token_vocabulary(label_namespace), {
                namespace: of.get_token_to_index_vocabulary(namespace)
                for namespace in vocab.get_namespaces()
            }

        with configuration_errors():
            rules.check_him_members(
                *labels_and_vocabulary(vocab),
                {name: labels_and_vocabulary(member.vocab) for name, member in members.items()},
            )
        self._members = nn.ModuleDict(members)
        self._member_names = list(members)
        self._label_namespace = label_namespace
        self._accuracy = CategoricalAccuracy()
        self._member_accuracy = {name: CategoricalAccuracy() for name in members}
        self._oracle = Share()

    @property
    def members(self) -> Dict[str, Model]:
        return {name: cast(Model, self._members[name]) for name in self._member_names}

    # AllenNLP's `Model.forward(*inputs)`; the trainer and predictors pass the fields by name.
    def forward(  # type: ignore[override]
        self,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
        **fields: Any,
    ) -> Dict[str, Any]:
        """`fields`: the batch's other fields (`premise`, `hypothesis`, their transitions, ...),
        handed to every member as they are, with the `label` and `metadata`."""
        outputs = {
            name: member(label=label, metadata=metadata, **fields)
            for name, member in self._members.items()
        }
        # Shape: (batch_size, num_labels)
        probs = torch.stack([out["probs"] for out in outputs.values()]).mean(dim=0)
        output: Dict[str, Any] = {"probs": probs, "logits": probs.log()}
        for name, out in outputs.items():
            output[f"{name}_probs"] = out["probs"]
        # The trees (and where they came from) of the first member that composed over trees.
        for side in ("premise", "hypothesis"):
            for key in (f"{side}_transitions", f"{side}_transitions_source"):
                trees = [out[key] for out in outputs.values() if key in out]
                if trees:
                    output[key] = trees[0]
        if metadata is not None:
            output["metadata"] = metadata
        if label is not None:
            gold = label.long().view(-1)
            output["loss"] = sum(out["loss"] for out in outputs.values())
            self._accuracy(probs, gold)
            any_right = torch.zeros_like(gold, dtype=torch.bool)
            for name, out in outputs.items():
                self._member_accuracy[name](out["probs"], gold)
                any_right |= out["probs"].argmax(dim=-1) == gold
            self._oracle(int(any_right.sum()), gold.numel())
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        for prefix in [""] + [f"{name}_" for name in self._members]:
            add_labels(output_dict, self.vocab, self._label_namespace, prefix)
        if "premise_transitions" in output_dict:  # a member composed over trees
            add_readable_trees(output_dict)
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"accuracy": self._accuracy.get_metric(reset)}
        for name, accuracy in self._member_accuracy.items():
            metrics[f"{name}_accuracy"] = accuracy.get_metric(reset)
        metrics["oracle_accuracy"] = self._oracle.get_metric(reset)
        return metrics

    default_predictor = "spinn_nli"


def archive_him(
    member_archives: Dict[str, Union[str, Path]],
    archive_file: Union[str, Path],
    reader_from: Optional[str] = None,
) -> HimNli:
    """Combines trained NLI archives into one HIM archive, as Chen et al. (2017) did (models
    trained apart, probabilities averaged), for `allennlp evaluate` and `allennlp predict`.

    The HIM archive is self-contained: its config holds each member's model config and its
    weights all members' weights. The rest of the config (dataset reader, data loaders) comes
    from the member `reader_from` (default: the first whose reader has a `tree_source`, else
    the first). Members must have the same vocabulary. Returns the combined model."""
    archives = {name: load_archive(str(path)) for name, path in member_archives.items()}
    if not archives:
        raise ConfigurationError("archive_him needs at least one member archive")
    configs = {name: archive.config.as_dict(quiet=True) for name, archive in archives.items()}
    if reader_from is None:
        with_source = [n for n, c in configs.items() if "tree_source" in c["dataset_reader"]]
        reader_from = (with_source or list(configs))[0]
    config = dict(configs[reader_from])
    config["model"] = {
        "type": "him_nli",
        "members": {name: c["model"] for name, c in configs.items()},
    }
    vocab = archives[reader_from].model.vocab
    model = HimNli(vocab, {name: archive.model for name, archive in archives.items()})
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / CONFIG_NAME).write_text(json.dumps(config, indent=2))
        vocab.save_to_files(str(Path(directory) / "vocabulary"))
        torch.save(model.state_dict(), Path(directory) / "weights.th")
        archive_model(directory, weights="weights.th", archive_path=str(archive_file))
    return model
