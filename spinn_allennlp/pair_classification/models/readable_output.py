"""What the NLI models add to their output for people (`make_output_human_readable`): the label
and each label's probability (`add_labels`), and the trees each sentence was composed over
(`add_readable_trees`)."""

from typing import Any, Dict

from allennlp.data import Vocabulary

from spinn_allennlp.data.dataset_readers import LEFT_PAD_TOKEN
from spinn_allennlp.data.trees import readable_tree


def add_labels(
    output_dict: Dict[str, Any], vocab: Vocabulary, label_namespace: str, prefix: str = ""
) -> Dict[str, Any]:
    """Adds `{prefix}label` (each pair's most probable label) and `{prefix}label_probs` (each
    label's probability by name) from the output's `{prefix}probs`, shape (batch_size,
    num_labels)."""
    labels = vocab.get_index_to_token_vocabulary(label_namespace)
    probs = output_dict[f"{prefix}probs"].detach().cpu()
    output_dict[f"{prefix}label"] = [labels[int(i)] for i in probs.argmax(dim=-1)]
    output_dict[f"{prefix}label_probs"] = [
        {labels[i]: float(prob) for i, prob in enumerate(row)} for row in probs
    ]
    return output_dict


def add_readable_trees(output_dict: Dict[str, Any]) -> Dict[str, Any]:
    """Adds `premise_tree` / `hypothesis_tree` (bracketed) from the output's `*_transitions`
    and `metadata`, for each side with transitions (when there is metadata)."""
    if "metadata" not in output_dict:
        return output_dict
    for name in ("premise", "hypothesis"):
        if f"{name}_transitions" not in output_dict:
            continue
        transitions = output_dict[f"{name}_transitions"].cpu()
        output_dict[f"{name}_tree"] = [
            readable_tree(meta[f"{name}_tokens"], row.tolist(), LEFT_PAD_TOKEN)
            for row, meta in zip(transitions, output_dict["metadata"])
        ]
    return output_dict
