"""A shift-reduce parser with a network of its own: disjoint syntax and semantics (Havrylov et
al. 2019) in SPINN form.

Every other parser here reads the composition's own nodes, and what tips a latent parser into
trivial trees is the size of the trained nodes it reads (results/listops/README.md, "Why they
collapse"). This one reads nothing of the composition: its own word embeddings (or, without
them, the word vectors with no gradient back), a leaf LSTM over the words, and a full SPINN of
its own (a TreeLSTM over its own node states and the tracking LSTM that scores SHIFT and REDUCE,
§3.3 and eq. 5). Its output is a tree, as transitions. The task's composition then follows those
transitions as given trees — level by level for SPINN-PI-NT (``runners/levelwise.py``), since
the whole tree is known once the parser has run — so only the parser, small, runs the 2N - 1
sequential steps. No value and no gradient crosses from one to the other: the parser learns from
its own losses (a transition loss on gold trees, REINFORCE's and PPO's terms), the composition
from the task's.
"""

from typing import Callable, Optional

import torch
from torch import nn

from spinn_core.output import SpinnOutput
from spinn_core.policies import TransitionPolicy
from spinn_core.spinn import Spinn


class ParserNetwork(nn.Module):
    """The parser of its own: ``forward(words, mask, transitions, policy)`` runs its SPINN with
    ``policy`` choosing the moves (greedy, sampled, replayed, given for teacher forcing) and
    returns that pass's ``SpinnOutput``: the transitions followed, the SHIFT/REDUCE logits, and
    for a sampling policy the moves' log-probabilities and entropies.

    ``words``: (B, N) token ids when the network has an embedding (``num_embeddings > 0``),
    else (B, N, input_dim) word vectors (read as they are; the caller detaches them when they
    belong to the task). ``mask``: (B, N), real words first in each row.

    * ``input_dim``: the size of the words' vectors (its own embeddings' size with an
      embedding);
    * ``hidden_dim``: the size of its leaf LSTM and of its TreeLSTM's nodes;
    * ``tracking_dim``: the size of its tracking LSTM, whose state scores the moves;
    * ``leaf_lstm``: a forward LSTM over the words before the stack (Havrylov et al.'s parser
      leaves), so that a word on the stack or in the buffer carries what came before it; with
      real words first, the padding after them changes no real word's state.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        tracking_dim: int,
        num_embeddings: int = 0,
        leaf_lstm: bool = True,
    ) -> None:
        super().__init__()
        if tracking_dim < 1:
            raise ValueError(
                f"the parser scores its moves from its tracking LSTM: tracking_dim must be "
                f"positive, got {tracking_dim}"
            )
        self.input_dim = input_dim
        self.embedding = nn.Embedding(num_embeddings, input_dim) if num_embeddings else None
        if self.embedding is not None:
            # AllenNLP's `Embedding` default, as the task's embeddings start.
            nn.init.xavier_uniform_(self.embedding.weight)
        self.leaf_lstm = nn.LSTM(input_dim, hidden_dim, batch_first=True) if leaf_lstm else None
        self.spinn = Spinn(
            input_dim=hidden_dim if leaf_lstm else input_dim,
            hidden_dim=hidden_dim,
            tracking_dim=tracking_dim,
            predict_transitions=True,
        )

    @property
    def reads_token_ids(self) -> bool:
        return self.embedding is not None

    def forward(
        self,
        words: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor],
        policy: TransitionPolicy,
        core: Optional[Callable[..., SpinnOutput]] = None,
    ) -> SpinnOutput:
        """``core``: what runs this network's SPINN (its ``spinn`` wrapped from outside, e.g.
        replayed from CUDA graphs by ``graphs.GraphedSpinn``); None: ``spinn`` itself."""
        # Shape: (B, N, input_dim)
        vectors = self.embedding(words) if self.embedding is not None else words
        if self.leaf_lstm is not None:
            # Shape: (B, N, hidden_dim)
            vectors = self.leaf_lstm(vectors)[0]
        return (core or self.spinn)(vectors, mask, transitions, policy=policy)
