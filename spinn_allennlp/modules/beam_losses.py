"""A beam mixture's losses in a model that classifies each of a beam's trees alone
(`mix: "predictions"` / `"best_tree"`): the label distributions mixed by the parser's scores
(`mix_beam_predictions`) and the parser's hard-EM term (`best_tree_loss`)."""

import torch


def mix_beam_predictions(per_tree: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """A beam that mixes predictions (`mix: "predictions"` / `"best_tree"`): `per_tree`
    (B, K, labels), the logits of each of a row's K trees (or pairs of trees) classified
    alone; `scores` (B, K), the parser's summed log-probabilities, -inf for an empty slot.
    The label distributions mixed by the softmax of the scores, as logits: the log of
    p(y) = sum_k w_k p(y | tree_k) (its softmax is the mixture)."""
    log_weights = torch.log_softmax(scores, dim=1).to(per_tree.dtype)
    return torch.logsumexp(log_weights.unsqueeze(2) + torch.log_softmax(per_tree, dim=2), dim=1)


def best_tree_loss(
    per_tree: torch.Tensor, scores: torch.Tensor, gold: torch.Tensor
) -> torch.Tensor:
    """The parser's part of `mix: "best_tree"` (hard EM over a beam), added to the mixed
    prediction's loss: of each row's K trees (`per_tree`: (B, K, labels) logits; `scores`:
    (B, K) the parser's summed log-probabilities, -inf for an empty slot), the one whose own
    prediction gives the gold label the highest probability is the target of the beam's
    softmax (its cross-entropy there): the parser pulled towards that tree by the full amount
    however close the others come, as best-draw's best draw but inside the beam. The
    classifier keeps learning from the mixture, not from the tree the label picked (trained on
    label-picked trees alone, it learns answers no test-time tree supports: the pilot that
    tried it fell to 26 % dev by epoch 4, against the mixture's 49 %)."""
    # Shape: (B, K), the gold label's log-probability under each tree alone.
    gold_log_probs = torch.log_softmax(per_tree, dim=2).gather(
        2, gold.view(-1, 1, 1).expand(-1, per_tree.size(1), 1)
    )[:, :, 0]
    alive = torch.isfinite(scores)
    best = gold_log_probs.detach().masked_fill(~alive, float("-inf")).argmax(dim=1, keepdim=True)
    return -torch.log_softmax(scores, dim=1).gather(1, best).mean()
