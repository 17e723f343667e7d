from typing import Callable, Optional, Sequence

import torch
from allennlp.common import FromParams

from spinn_allennlp.core.output import SpinnOutput
from spinn_allennlp.core.policies import Greedy, Sampled, TransitionPolicy
from spinn_allennlp.core.supervision import policy_gradient_loss


class PolicyGradient(FromParams):
    """Trains a tree encoder's parser from the task's loss alone (latent trees), by REINFORCE
    with a self-critical baseline (Rennie et al. 2017; as Havrylov et al. 2019 on ListOps).

    While the model trains, each sentence's tree is sampled from the parser's distribution
    over legal moves (`core.policies.Sampled`); its reward is minus the task's loss on that
    example, and its baseline minus the loss the parser's greedy tree gets (a second pass
    without gradients). The parser (through the log-probability of each sampled tree) is pushed
    towards trees that did better than its own greedy choice; an entropy bonus keeps it
    exploring. The task's loss trains everything else as usual. At evaluation the encoder
    follows its greedy parse.

    A model that takes a `policy_gradient` (`spinn_classifier`, `spinn_nli`) calls
    :meth:`loss`; the encoder needs a parser (`predict_transitions: true`) and no gold
    transition loss. Give the parser its own learning rate with the optimizer's
    `parameter_groups` (e.g. `[["_encoder\\\\.spinn\\\\.tracker"], {"lr": 1e-4}]`).

    # Parameters

    weight : `float`, optional (default = `1.0`)
        The weight of the REINFORCE term in the loss.
    entropy_weight : `float`, optional (default = `1e-4`)
        The weight of the entropy bonus (mean over the batch of each tree's summed entropy).
    temperature : `float`, optional (default = `1.0`)
        Sample from the parser's softmax at this temperature.
    normalize_advantage : `bool`, optional (default = `True`)
        Divide the advantages by their standard deviation over the batch.
    """

    def __init__(
        self,
        weight: float = 1.0,
        entropy_weight: float = 1e-4,
        temperature: float = 1.0,
        normalize_advantage: bool = True,
    ) -> None:
        self.weight = weight
        self.entropy_weight = entropy_weight
        self.normalize_advantage = normalize_advantage
        self.sampling = Sampled(temperature)

    def policy(self) -> TransitionPolicy:
        """How trees are chosen while the model trains."""
        return self.sampling

    def loss(
        self,
        task_losses: torch.Tensor,
        trees: Sequence[Optional[SpinnOutput]],
        greedy_task_losses: Callable[[TransitionPolicy], torch.Tensor],
    ) -> torch.Tensor:
        """The REINFORCE term for one batch. `task_losses`: (B,) the task's loss of each example
        with its sampled trees, `trees`: the encoder's outputs of that pass (one per sentence of
        an example: two for a pair; None for an encoder without a parser), and
        `greedy_task_losses(policy)`: the model's (B,) losses with trees chosen by `policy`,
        called once with the greedy policy, without gradients, for the baseline."""
        log_probs, entropy = [], []
        for tree in trees:
            if tree is not None and tree.action_log_probs is not None:
                assert tree.action_entropy is not None  # a sampling policy reports both
                log_probs.append(tree.action_log_probs.sum(dim=1))
                entropy.append(tree.action_entropy.sum(dim=1))
        if not log_probs:
            return task_losses.sum() * 0.0
        with torch.no_grad():
            baseline = greedy_task_losses(Greedy())
        surrogate = policy_gradient_loss(
            torch.stack(log_probs).sum(dim=0),
            reward=-task_losses.detach(),
            baseline=-baseline,
            entropy=torch.stack(entropy).sum(dim=0),
            entropy_weight=self.entropy_weight,
            normalize=self.normalize_advantage,
        )
        return self.weight * surrogate
