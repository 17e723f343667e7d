"""Transition policies: what decides each step's transition (and REDUCE type).

A runner (``runners/``) moves the stack; at every step it hands the policy a :class:`Step` —
the parser's logits when the model has one, the given transitions when there are any, and
which moves are legal — and applies the :class:`Choice` it gets back. The loop never asks which
policy it runs, so a new way of choosing is one class:

* :class:`Given` follows the given transitions (gold trees, a tree source's, or the balanced
  default tree): SPINN-PI-NT, SPINN-PI, and the full SPINN under teacher forcing;
* :class:`Greedy` follows the parser's most probable legal move: the full SPINN at test time;
* :class:`BeamSearch` keeps the parser's ``width`` most probable partial parses per sentence
  and follows the best tree found (``runners/beam.py``, at evaluation);
* :class:`Mixed` follows, per step, the given transition or, with some probability, its own
  (NSHRDLU Model 2, scheduled sampling);
* :class:`Sampled` draws each move from the parser's distribution over legal moves and
  reports the log-probability of what it drew and the distribution's entropy (in
  ``SpinnOutput.action_log_probs`` / ``action_entropy``), what a score-function (REINFORCE)
  estimator needs;
* :class:`Replayed` follows the moves a :class:`Sampled` pass drew and scores them under
  the parser as it is now (PPO's further updates on the trees of one batch);
* :class:`SoftStrengths` drives the soft stack (``runners/soft_stack.py``): instead of a
  choice, a strength of REDUCE in [0, 1];
* :class:`StraightThroughGumbel` drives the soft stack with strengths of exactly 0 or 1 (a
  move drawn by the Gumbel-max trick, so the forward pass is a discrete stack's) whose
  gradient is the Gumbel softmax's (Jang et al. 2017; Choi et al. 2018 for latent trees).

Every policy keeps trees valid: a discrete policy either follows given transitions (checked to
be trees before the first step) or passes its move through :meth:`Step.legal` (SHIFT when the
stack holds fewer than two items, REDUCE when the buffer is empty), so a parse is always one
binary tree over all the words.

What a policy needs and gives (the runner it drives, what it does with given trees, whether it
reads the parser, whether a CUDA graph can replay it, whether its moves are legal by
construction, its mode and the demo's caption for it) is declared once on its class, its
:class:`PolicyTraits`; everything that branches on a policy reads that declaration.
"""

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from spinn_core.output import Mode
from spinn_core.rules import check_beam_mixture, check_parser_logits
from spinn_core.transitions import PAD, REDUCE, SHIFT

# () -> (must_shift, must_reduce), each (k,) bool.
Legality = Callable[[], Tuple[torch.Tensor, torch.Tensor]]


def forced_moves(
    stack_below_two: torch.Tensor, buffer_empty: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The legal-move rule, written once for every runner and policy: (must_shift,
    must_reduce). A stack of fewer than two items must SHIFT (there is nothing to compose); an
    empty buffer must REDUCE, once there are two items to compose. Each runner says the two
    facts in its own terms (the thin stack from its pointers; the soft stack's preferred tree
    from its depth and words shifted); the soft stack's strengths obey the same rule in
    continuous form (``runners/soft_stack.py``), and the checks of given transitions
    (``transitions.fold``, ``batch.check_given_transitions``) refuse exactly the moves it
    forbids: ``tests/core/test_legality_rule.py`` pins every form to this one."""
    return stack_below_two, buffer_empty & ~stack_below_two


def impose_forced(
    action: torch.Tensor, must_shift: torch.Tensor, must_reduce: torch.Tensor
) -> torch.Tensor:
    """``action`` with the forced moves of :func:`forced_moves` imposed (a forced SHIFT wins,
    so ``must_reduce`` may be given without excluding it)."""
    return torch.where(must_shift, SHIFT, torch.where(must_reduce, REDUCE, action))


@dataclass
class Step:
    """What a policy sees at step ``t`` of the ``k`` sentences still running (thin stack: in
    the runner's longest-first order; soft stack: all ``k = B`` sentences)."""

    t: int
    # Shape: (k, 2). The parser's SHIFT/REDUCE logits; None for a model without a parser.
    logits: Optional[torch.Tensor]
    # Shape: (k, K). The REDUCE type classifier's logits (typed REDUCE with a parser).
    type_logits: Optional[torch.Tensor]
    # Shape: (k,). The given transition at step t (PAD past a shorter given sequence), when
    # transitions were given.
    given: Optional[torch.Tensor]
    # Shape: (k,). The given type of a given REDUCE at step t (-1 elsewhere), when given.
    given_types: Optional[torch.Tensor]
    # Computes which moves are forced, on demand (a policy that follows given trees never
    # asks).
    legality: Optional[Legality] = None
    # Shape: (B,). The batch's sentences in the runner's order: the step's k rows are
    # sentences ``order[:k]`` (None: the batch's own order, all B sentences).
    order: Optional[torch.Tensor] = None
    _forced: Optional[Tuple[torch.Tensor, torch.Tensor]] = field(default=None, repr=False)

    def forced(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """(must_shift, must_reduce), each (k,) bool: fewer than two items on the stack, an
        empty buffer."""
        if self._forced is None:
            if self.legality is None:
                raise ValueError("this runner does not say which moves are legal")
            self._forced = self.legality()
        return self._forced

    def sentences(self, k: int) -> Optional[torch.Tensor]:
        """Shape (k,): which sentences of the batch the step's k rows are (None: rows 0..k-1)."""
        return None if self.order is None else self.order[:k]

    def legal(self, action: torch.Tensor) -> torch.Tensor:
        """``action`` with the forced moves imposed: SHIFT below two stack items, REDUCE once
        the buffer is empty."""
        return impose_forced(action, *self.forced())

    def legal_log_probs(self, temperature: float = 1.0) -> torch.Tensor:
        """Shape (k, 2): log-probabilities of SHIFT and REDUCE under the parser's softmax (at
        ``temperature``) restricted to the legal moves: a forced move has probability 1."""
        logits = self.parser_logits("this policy")
        must_shift, must_reduce = self.forced()
        illegal = torch.stack([must_reduce, must_shift], dim=1)
        return torch.log_softmax((logits / temperature).masked_fill(illegal, float("-inf")), -1)

    def parser_logits(self, who: str) -> torch.Tensor:
        """The parser's logits, for ``who`` (a policy that reads them); a model without a
        parser is refused by the rule book (a pass checks it before its first step)."""
        check_parser_logits(self.logits is not None, who)
        assert self.logits is not None
        return self.logits


@dataclass
class Choice:
    """A policy's decision for the ``k`` running sentences of a step."""

    # Shape: (k,). SHIFT or REDUCE, legal.
    action: torch.Tensor
    # Shape: (k,). The type of each REDUCE (typed REDUCE); read at REDUCEs only.
    types: Optional[torch.Tensor] = None
    # Shape: (k,). log p(action) under the distribution the action was drawn from, and that
    # distribution's entropy (sampling policies).
    log_prob: Optional[torch.Tensor] = None
    entropy: Optional[torch.Tensor] = None
    # Shape: (k,). A beam's reordering: running row i continues the hypothesis of row
    # ``parents[i]`` (its stack, buffer, tracker state and history) before ``action`` is
    # applied; ``action`` is legal for that parent's stack. None: every row continues itself.
    parents: Optional[torch.Tensor] = None


# PolicyTraits.drives: which runner a policy drives (``spinn.pick_runner``).
DRIVES = ("discrete", "soft", "beam", "beam_mixture")
# PolicyTraits.given: what a policy does with given transitions.
GIVEN_USES = ("follows", "mixes", "ignores")


@dataclass(frozen=True)
class PolicyTraits:
    """What a policy needs and gives, declared once on its class (``traits = PolicyTraits(...)``;
    per instance where a constructor argument changes it, by ``dataclasses.replace``). The
    runner picker, the checks, the CUDA graphs, the encoder and the demo's captions read it;
    the flags code reads off a policy (``policy.soft``, ``policy.follows_given``, ...) are views
    of it (the properties below, and :class:`TransitionPolicy`'s)."""

    # What ``SpinnOutput.mode`` reports: a ``Mode`` for the policies here, any name for others.
    mode: str
    # What a tree of this mode is, in words: the demo's caption for it
    # (``spinn_allennlp/demo/render.py``'s ``SOURCE_DESCRIPTIONS``; a test keeps them equal).
    caption: str = ""
    # The runner it drives (one of DRIVES): "discrete" (``choose``, the thin stack), "soft"
    # (``reduce_strength``, the soft stack), "beam" (a search over several parses per sentence,
    # ``runners/beam.py``) or "beam_mixture" (its sentence vector mixes a beam's roots).
    drives: str = "discrete"
    # What it does with given transitions (one of GIVEN_USES): "follows" them (checked trees;
    # the balanced tree when none: the runner knows every move before the first step and may
    # plan with it), "mixes" with them (so needs them), or "ignores" them.
    given: str = "ignores"
    # Reads the parser's logits (``step.logits``).
    needs_parser: bool = True
    # The task's loss can train the parser through what it returns (soft strengths, or the
    # log-probabilities of sampled moves for REINFORCE), with no gold transitions.
    learns_from_task: bool = False
    # Its choices are tensor functions of the step alone (random numbers from torch's
    # generator included): no Python state carried from call to call and no value read back
    # to the host, so a CUDA graph of a pass can replay it (``graphs.py``).
    replayable: bool = False
    # Its moves are legal by construction (passed through ``Step.legal``, given trees checked
    # before the first step, or checked by itself): a pass does not check them
    # (:func:`with_move_check`). Said of its ``choose``: a subclass that replaces ``choose``
    # without declaring traits of its own loses it (and ``replayable``).
    legal_by_construction: bool = False
    # The pass is run for the parser's scores of its moves alone (PPO's further updates): what
    # only the sentence vectors need (a separate composition) may be skipped.
    rescores_only: bool = False
    # Given transitions may leave a stack of trees, the top one the sentence's (the paper's
    # left-padded mode); otherwise a given row must be one tree over its words.
    left_padded: bool = False

    def __post_init__(self) -> None:
        if self.drives not in DRIVES:
            raise ValueError(f"PolicyTraits.drives must be one of {DRIVES}, got {self.drives!r}")
        if self.given not in GIVEN_USES:
            raise ValueError(f"PolicyTraits.given must be one of {GIVEN_USES}, got {self.given!r}")

    @property
    def follows_given(self) -> bool:
        return self.given == "follows"

    @property
    def needs_given(self) -> bool:
        return self.given == "mixes"

    @property
    def reads_given(self) -> bool:
        """Given transitions reach it (it follows or mixes with them)."""
        return self.given != "ignores"

    @property
    def soft(self) -> bool:
        return self.drives == "soft"

    @property
    def searches(self) -> bool:
        return self.drives in ("beam", "beam_mixture")

    @property
    def mixes(self) -> bool:
        return self.drives == "beam_mixture"


# The flags a policy class used to set one by one (``needs_parser = False``), each now a view
# of its traits: still read off any policy, and still accepted as class attributes.
FLAGS = (
    "mode",
    "follows_given",
    "needs_given",
    "needs_parser",
    "soft",
    "searches",
    "mixes",
    "left_padded",
    "learns_from_task",
    "replayable",
    "rescores_only",
)


def traits_with_flags(traits: PolicyTraits, flags: Dict[str, Any]) -> PolicyTraits:
    """``traits`` with old-style flags (``{"needs_parser": False, "soft": True}``) folded in."""
    value = {name: flags.get(name, getattr(traits, name)) for name in FLAGS}
    drives = "soft" if value["soft"] else "discrete"
    if value["mixes"] or value["searches"]:
        drives = "beam_mixture" if value["mixes"] else "beam"
    given = "follows" if value["follows_given"] else "mixes" if value["needs_given"] else "ignores"
    kept = (
        "mode",
        "needs_parser",
        "learns_from_task",
        "replayable",
        "rescores_only",
        "left_padded",
    )
    return replace(traits, drives=drives, given=given, **{name: value[name] for name in kept})


def _view(name: str) -> Any:
    """A read-only property: the policy's ``traits.<name>``."""
    return property(lambda self: getattr(self.traits, name), doc=f"``traits.{name}``")


class TransitionPolicy:
    """Decides the transitions of a pass. A subclass declares its :class:`PolicyTraits` once
    (``traits = PolicyTraits(mode=..., ...)``) and implements :meth:`choose` (discrete runners)
    or :meth:`reduce_strength` (the soft stack).

    A subclass written before traits, with flags as class attributes (``mode = "mine"``,
    ``needs_parser = False``, ``soft = True``, ...), still works: :meth:`__init_subclass__`
    folds them into its traits. A subclass that declares no mode reports its class's name."""

    traits = PolicyTraits(mode="")

    # Views of ``traits``, read-only (see PolicyTraits).
    mode = _view("mode")
    follows_given = _view("follows_given")
    needs_given = _view("needs_given")
    needs_parser = _view("needs_parser")
    soft = _view("soft")
    searches = _view("searches")
    mixes = _view("mixes")
    left_padded = _view("left_padded")
    learns_from_task = _view("learns_from_task")
    replayable = _view("replayable")
    rescores_only = _view("rescores_only")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        flags = {
            name: own[name] for name in FLAGS if name in own and not isinstance(own[name], property)
        }
        if "traits" in own:
            if flags:
                raise TypeError(
                    f"{cls.__name__} declares traits and the flags {sorted(flags)}: put the "
                    f"flags in its PolicyTraits"
                )
            return
        traits = cls.traits
        if "choose" in own or "reduce_strength" in own:
            # What a class vouched for about its moves is not said of a method that replaces
            # its own: they are checked, each step (as any policy written elsewhere).
            traits = replace(traits, legal_by_construction=False, replayable=False)
        traits = traits_with_flags(traits, flags)
        for name in flags:
            delattr(cls, name)  # the inherited view reads the traits
        cls.traits = traits if traits.mode else replace(traits, mode=cls.__name__)

    def choose(self, step: Step) -> Choice:
        raise NotImplementedError(f"{type(self).__name__} does not drive a discrete stack")

    def reduce_strength(self, step: Step) -> torch.Tensor:
        """Shape (k,): the strength of REDUCE at this step, before the legal-move rule."""
        raise NotImplementedError(f"{type(self).__name__} does not drive a soft stack")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def step_types(step: Step, follows_given: Optional[torch.Tensor] = None) -> Optional[torch.Tensor]:
    """Shape (k,): each running sentence's REDUCE type: the given type where one is given (and
    ``follows_given`` is True, when passed), the type classifier's choice elsewhere; None
    without typed REDUCE."""
    predicted = step.type_logits.argmax(dim=-1) if step.type_logits is not None else None
    if step.given_types is None:
        return predicted
    if predicted is None:
        return step.given_types
    use_given = step.given_types >= 0
    if follows_given is not None:
        use_given = use_given & follows_given
    return torch.where(use_given, step.given_types, predicted)


class Given(TransitionPolicy):
    """Follows the given transitions (and given REDUCE types), each one binary tree over its
    sentence's words. ``left_padded``: the paper's fixed-length mode (a reader's
    ``crop_pad_length``), whose rows shift padding words at the left that no REDUCE joins: a
    stack of trees, the top one the sentence's."""

    traits = PolicyTraits(
        mode=Mode.GIVEN,
        caption="the given transitions (gold, a tree source's, or the balanced default tree)",
        given="follows",
        needs_parser=False,
        replayable=True,
        legal_by_construction=True,
    )

    def __init__(self, left_padded: bool = False) -> None:
        if left_padded:
            self.traits = replace(self.traits, left_padded=True)

    def __repr__(self) -> str:
        return "Given(left_padded=True)" if self.left_padded else "Given()"

    def choose(self, step: Step) -> Choice:
        assert step.given is not None  # follows_given: the batch always has them
        return Choice(step.given, types=step_types(step))


class Greedy(TransitionPolicy):
    """The parser's most probable legal move (and the type classifier's most probable type)."""

    traits = PolicyTraits(
        mode=Mode.PREDICTED,
        caption="the model's own parser",
        replayable=True,
        legal_by_construction=True,
    )

    def choose(self, step: Step) -> Choice:
        action = step.legal(step.parser_logits("the greedy policy").argmax(dim=-1))
        types = step.type_logits.argmax(dim=-1) if step.type_logits is not None else None
        return Choice(action, types=types)


class BeamSearch(TransitionPolicy):
    """The parser's most probable tree found by beam search: the ``width`` most probable
    partial parses (sums of the legal moves' log-probabilities, a forced move counting 0) kept
    at every step, and each sentence's best at its last step. Width 1 is :class:`Greedy`; a
    width of at least the number of binary trees over a sentence's words finds its most
    probable tree. Types: the type classifier's most probable (as greedy).

    Runs through ``runners/beam.py``, for evaluation: that runner repeats every sentence
    ``width`` times (consecutive rows), searches without gradients with this policy, then
    encodes each sentence once on the tree found. Here, the running rows come in groups of
    ``width`` copies of one sentence; ``choose`` ranks each group's ``2 * width`` continuations
    and returns the best ``width``, best first, as moves and the rows they continue
    (``Choice.parents``). ``scores``: each row's log-probability so far (sorted rows)."""

    traits = PolicyTraits(
        mode=Mode.PREDICTED,
        caption="the model's own parser",
        drives="beam",
        legal_by_construction=True,
    )

    def __init__(self, width: int) -> None:
        if width < 1:
            raise ValueError(f"a beam's width must be at least 1, got {width}")
        self.width = width
        self.scores: Optional[torch.Tensor] = None

    def start(self, num_rows: int, like: torch.Tensor) -> None:
        """A new search over ``num_rows`` rows (sentences x width)."""
        self.scores = beam_start_scores(num_rows, self.width, like)

    def choose(self, step: Step) -> Choice:
        if self.scores is None:
            raise ValueError("BeamSearch.start() must be called before a search")
        k = step.forced()[0].size(0)
        best, parents, action = expand_beam(step, self.scores[:k], self.width)
        self.scores[:k] = best
        return Choice(action, types=_beam_types(step, parents), parents=parents)

    def __repr__(self) -> str:
        return f"BeamSearch(width={self.width})"


def beam_start_scores(num_rows: int, width: int, like: torch.Tensor) -> torch.Tensor:
    """Shape (num_rows,): the scores a beam starts from, ``num_rows`` rows in groups of
    ``width`` copies of a sentence: each group's first copy alive with log-probability 0, the
    others not yet (-inf), so that the first steps do not fill the beam with copies of one
    parse."""
    if num_rows % width:
        raise ValueError(f"{num_rows} rows are not groups of {width} copies")
    scores = torch.zeros(num_rows // width, width, dtype=like.dtype, device=like.device)
    scores[:, 1:] = float("-inf")
    return scores.flatten()


def beam_candidates(step: Step, scores: torch.Tensor, width: int) -> torch.Tensor:
    """Shape (k / width, 2 * width): every continuation of the ``k`` running rows' partial
    parses (``scores``: their log-probabilities so far), grouped by sentence: candidate
    ``2 * j + move`` of a group is its row ``j`` followed by SHIFT (0) or REDUCE (1), scored by
    the sum of the path's legal moves' log-probabilities (a forced move counts 0, an illegal
    one is -inf)."""
    log_probs = step.legal_log_probs()  # (k, 2)
    k = log_probs.size(0)
    return (scores.unsqueeze(1) + log_probs.to(scores.dtype)).view(k // width, 2 * width)


def follow_candidates(
    step: Step, index: torch.Tensor, width: int
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(parents, action), each (k,): the rows and moves of the candidates chosen by ``index``
    (groups x width, positions in :func:`beam_candidates`' columns). A chosen candidate that
    scores -inf (fewer live continuations than the width) may hold an illegal move: it is made
    legal for its parent's stack, so that every row still builds a tree."""
    group_start = torch.arange(0, index.numel(), width, device=index.device).unsqueeze(1)
    parents = (group_start + torch.div(index, 2, rounding_mode="floor")).flatten()
    must_shift, must_reduce = step.forced()
    action = impose_forced(
        (index % 2).flatten(),
        must_shift.index_select(0, parents),
        must_reduce.index_select(0, parents),
    )
    return parents, action


def expand_beam(
    step: Step, scores: torch.Tensor, width: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of a beam (hard top-k): the ``width`` best continuations of each sentence's
    partial parses, best first. Returns their scores, the rows they continue and their
    moves, each (k,)."""
    best, index = beam_candidates(step, scores, width).topk(width, dim=1)
    parents, action = follow_candidates(step, index, width)
    return best.flatten(), parents, action


class BeamMixture(TransitionPolicy):
    """Trains a parser from the task alone through a beam of its trees: each sentence keeps
    the ``width`` most probable partial parses (summed log-probabilities of the legal moves,
    as :class:`BeamSearch`), expanded by every legal move and cut back to the best ``width``
    at each step, and the sentence vector is the mixture of the beam's roots weighted by the
    softmax of their paths' scores (``runners/beam.py``, :func:`run_beam_mixture`). The task's
    gradient reaches the parser through those scores, with no sampling and no baseline: the
    easy-first Beam Tree Cell's estimator (Ray Chowdhury and Caragea 2023) in shift-reduce
    form. With a width of at least the number of trees over a sentence, the mixture is the
    exact expectation of the root under the parser's distribution over trees.

    The score of a path is the SUM of its steps' log-probabilities. Scoring a path by its
    last step alone (as the one public beam shift-reduce cell does) gives every finished
    tree the same weight: the last move is always a forced REDUCE, of log-probability 0, so
    the mixture is uniform and the parser gets no gradient.

    ``soft_top_k`` (BT-Cell's "OneSoft", in shift-reduce form): the beam's last slot is the
    best of the candidates the hard cut would drop, and its score is their softmax-weighted
    mean score, so that the dropped candidates' scores get a gradient too. (Easy-first
    sequences all have the same number of nodes, so BT-Cell also averages their states;
    stacks of different depths cannot be averaged, so here the slot follows its best
    candidate's stack.) Forward values change: the last slot scores less than its best.

    ``mix``: what the softmax over the scores weighs. ``"roots"`` (BT-Cell's): the sentence
    vector is the mixture of the roots. ``"predictions"``: the output also carries every root
    (``SpinnOutput.beam_roots``), and a model that knows (``spinn_classifier``) classifies
    each tree's root on its own and mixes the predictions, p(y) = sum_k w_k p(y | tree_k): the
    marginal likelihood of the label over the beam's trees, whose gradient weighs each tree by
    how well it alone explains the label (``spinn_nli`` classifies each pair of a premise's
    and a hypothesis's tree; the plugin's other models refuse the setting, and a model that
    does not know, such as AllenNLP's ``basic_classifier``, reads the roots' mixture).
    ``"best_tree"``: as ``"predictions"``, plus hard EM for the parser: the beam's tree under
    which the label is likeliest is the target of the beam's softmax (its cross-entropy added
    to the loss), so the parser gets best-draw's full target, taken inside the beam, however
    small the trees' differences (``spinn_classifier``, ``spinn_nli``).

    ``gumbel_scale`` (exploration in training): which candidates survive a step is decided
    by their scores plus this scale times fresh Gumbel noise (at 1, a Gumbel-top-k draw of
    the step's continuations: the beam holds likely trees, not only the most likely), while
    the surviving paths keep their true scores, by which they are mixed and ranked. 0 (the
    default) is the hard top-k. A beam that holds every tree mixes the same whatever the noise.

    Types: the type classifier's most probable. ``scores``: each row's score so far (sorted
    rows), carrying gradients; ``history``: per step, the logits read and the rows continued,
    from which :meth:`path_logits` recovers the logits along each final row's path."""

    traits = PolicyTraits(
        mode=Mode.BEAM,
        caption="the most probable tree of the model's beam (beam training)",
        drives="beam_mixture",
        learns_from_task=True,
        legal_by_construction=True,
    )

    MIXES = ("roots", "predictions", "best_tree")

    def __init__(
        self, width: int, soft_top_k: bool = False, mix: str = "roots", gumbel_scale: float = 0.0
    ) -> None:
        check_beam_mixture(width, soft_top_k, mix, gumbel_scale, self.MIXES)
        self.width = width
        self.soft_top_k = soft_top_k
        self.mix = mix
        self.gumbel_scale = gumbel_scale
        self.scores: Optional[torch.Tensor] = None
        self.history: List[Tuple[torch.Tensor, torch.Tensor]] = []

    def start(self, num_rows: int, like: torch.Tensor) -> None:
        """A new pass over ``num_rows`` rows (sentences x width)."""
        self.scores = beam_start_scores(num_rows, self.width, like)
        self.history = []

    def choose(self, step: Step) -> Choice:
        if self.scores is None:
            raise ValueError("BeamMixture.start() must be called before a pass")
        k = step.forced()[0].size(0)
        candidates = beam_candidates(step, self.scores[:k], self.width)
        if self.soft_top_k:
            best, index = _one_soft_top_k(candidates, self.width)
        elif self.gumbel_scale:
            best, index = _perturbed_top_k(candidates, self.width, self.gumbel_scale)
        else:
            best, index = candidates.topk(self.width, dim=1)
        parents, action = follow_candidates(step, index, self.width)
        # Out of place: the earlier scores stay in the graph.
        self.scores = torch.cat([best.flatten(), self.scores[k:]])
        assert step.logits is not None  # legal_log_probs read them
        self.history.append((step.logits, parents))
        return Choice(action, types=_beam_types(step, parents), parents=parents)

    def path_logits(self, rows: torch.Tensor) -> torch.Tensor:
        """Shape (len(rows), T, 2): the parser's logits at every step of the paths that end
        in sorted rows ``rows``, zeros after a row's end (what the steps of a greedy pass along
        the same tree would record). Follows each row back through the rows it continued."""
        steps = []
        for logits, parents in reversed(self.history):
            running = rows < parents.size(0)
            parent = parents.index_select(0, rows.clamp(max=parents.size(0) - 1))
            steps.append(torch.where(running.unsqueeze(1), logits.index_select(0, parent), 0))
            rows = torch.where(running, parent, rows)
        if not steps:
            raise ValueError("BeamMixture.path_logits() before any step")
        return torch.stack(steps[::-1], dim=1)

    def __repr__(self) -> str:
        soft = ", soft_top_k=True" if self.soft_top_k else ""
        mix = f", mix={self.mix!r}" if self.mix != "roots" else ""
        noise = f", gumbel_scale={self.gumbel_scale}" if self.gumbel_scale else ""
        return f"BeamMixture(width={self.width}{soft}{mix}{noise})"


def _perturbed_top_k(
    candidates: torch.Tensor, width: int, scale: float
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(scores, index), each (groups, width): the ``width`` candidates with the highest score
    plus ``scale`` times Gumbel noise, ranked by their true scores (which they keep). -inf
    candidates stay -inf, so they come last, as in the hard cut."""
    uniform = torch.rand_like(candidates).clamp(min=torch.finfo(candidates.dtype).tiny)
    keys = candidates.detach() - scale * torch.log(-torch.log(uniform))
    _, index = keys.topk(width, dim=1)
    chosen = candidates.gather(1, index)
    order = chosen.detach().argsort(dim=1, descending=True)
    return chosen.gather(1, order), index.gather(1, order)


def _one_soft_top_k(candidates: torch.Tensor, width: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """(scores, index), each (groups, width): the hard top ``width - 1`` candidates, then the
    best of the rest with the softmax-weighted mean of the rest's scores (-inf candidates
    weigh 0; a slot with none alive stays -inf). See :class:`BeamMixture`."""
    ranked, index = candidates.sort(dim=1, descending=True)
    rest = ranked[:, width - 1 :]
    alive = torch.isfinite(rest)
    some = alive[:, :1]  # sorted: the first of the rest is alive if any is
    # Masked so that nothing is NaN, in value or gradient: a dead candidate weighs exactly 0
    # (softmax of -inf), and a group with none alive softmaxes zeros (its slot stays -inf).
    logits = torch.where(alive, rest, torch.where(some, float("-inf"), 0.0))
    weights = torch.softmax(logits, dim=1)
    mean = (weights * rest.masked_fill(~alive, 0.0)).sum(dim=1, keepdim=True)
    soft = torch.where(some, mean, rest[:, :1])
    return torch.cat([ranked[:, : width - 1], soft], dim=1), index[:, :width]


def _beam_types(step: Step, parents: torch.Tensor) -> Optional[torch.Tensor]:
    """The type classifier's most probable REDUCE type for each row's parent (typed REDUCE)."""
    if step.type_logits is None:
        return None
    return step.type_logits.index_select(0, parents).argmax(dim=-1)


class Mixed(TransitionPolicy):
    """Per step and sentence, the parser's own legal move with probability
    ``self_transition_prob``, the given transition otherwise (and the parser's own past the end
    of a shorter given sequence): NSHRDLU Model 2's interpolation from teacher forcing to the
    model's own predictions. Types follow the transitions: given where the given transition is
    followed."""

    traits = PolicyTraits(
        mode=Mode.MIXED,
        caption="the model's parser and given transitions",
        given="mixes",
        replayable=True,
        legal_by_construction=True,
    )

    def __init__(self, self_transition_prob: float) -> None:
        if not 0.0 <= self_transition_prob <= 1.0:
            raise ValueError("self_transition_prob must be in [0, 1]")
        self.self_transition_prob = self_transition_prob

    def choose(self, step: Step) -> Choice:
        assert step.logits is not None and step.given is not None
        own = step.logits.argmax(dim=-1)
        follow_own = torch.rand(own.size(0), device=own.device) < self.self_transition_prob
        action = torch.where(follow_own | (step.given == PAD), own, step.given)
        return Choice(step.legal(action), types=step_types(step, ~follow_own))

    def __repr__(self) -> str:
        return f"Mixed(self_transition_prob={self.self_transition_prob})"


class _Tempered(TransitionPolicy):
    """A policy that reads the parser's softmax at a temperature."""

    def __init__(self, temperature: float = 1.0) -> None:
        if temperature <= 0:
            raise ValueError("temperature must be positive")
        self.temperature = temperature

    def __repr__(self) -> str:
        return f"{type(self).__name__}(temperature={self.temperature})"


class Sampled(_Tempered):
    """Draws each move from the parser's softmax (at ``temperature``) over the legal moves, and
    reports the log-probability of the move drawn and the entropy of the distribution: the
    score function and the exploration bonus of REINFORCE-style training (the latent-tree
    parsers). Types: the type classifier's most probable.

    With ``record=True`` it keeps every step's draws (``draws``: per step, a (B,) tensor in the
    batch's order, PAD for the sentences the step did not run), so that :class:`Replayed` can
    follow the same trees again after the parser has changed (PPO's further updates on one
    batch), on any device and either way through the loop."""

    traits = PolicyTraits(
        mode=Mode.SAMPLED,
        caption="the model's parser, sampled (latent-tree training)",
        learns_from_task=True,
        replayable=True,
        legal_by_construction=True,
    )

    def __init__(self, temperature: float = 1.0, record: bool = False) -> None:
        super().__init__(temperature)
        self.draws: Optional[List[torch.Tensor]] = [] if record else None
        if record:  # its draws are Python state: no CUDA graph replays it
            self.traits = replace(self.traits, replayable=False)

    def choose(self, step: Step) -> Choice:
        log_probs = step.legal_log_probs(self.temperature)
        probs = log_probs.exp()
        draw = torch.rand(probs.size(0), device=probs.device, dtype=probs.dtype)
        # P(REDUCE) is 0 when SHIFT is forced and 1 when REDUCE is: the draw is legal.
        action = (draw < probs[:, REDUCE]).long()
        if self.draws is not None:
            self.draws.append(_in_batch_order(step, action))
        return _scored_choice(step, log_probs, action)


def _in_batch_order(step: Step, action: torch.Tensor) -> torch.Tensor:
    """Shape (B,): a step's (k,) ``action`` at its sentences' places in the batch, PAD for
    the sentences the step did not run."""
    sentences = step.sentences(action.size(0))
    if sentences is None or step.order is None:
        return action
    return torch.full_like(step.order, PAD).index_copy_(0, sentences, action)


class Replayed(_Tempered):
    """Follows the moves a recording :class:`Sampled` pass drew, step by step, and reports their
    log-probability and the entropy under the parser as it is now: the new policy's side of
    PPO's ratio p_new(tree) / p_old(tree) when the parser takes several updates on the trees of
    one batch (``modules/policy_gradient.py``). The pass must be over the same sentences, in the
    same encoder calls, as the recorded one: the runner then asks for the same steps, in the
    same order of sentences (the order depends on the sentences' lengths only). A draw of PAD
    (a sentence that had ended) replays as SHIFT: only a sentence that has ended meets it,
    and its moves are not followed.

    Checks that every replayed move is legal, which reads a value back to the host each step:
    not for a CUDA graph (``replayable`` is False)."""

    traits = PolicyTraits(
        mode=Mode.SAMPLED,
        caption="the model's parser, sampled (latent-tree training)",
        learns_from_task=True,
        rescores_only=True,
        legal_by_construction=True,  # it checks the recorded moves itself
    )

    def __init__(self, draws: Sequence[torch.Tensor], temperature: float = 1.0) -> None:
        super().__init__(temperature)
        self.draws = list(draws)
        self.next_step = 0

    def choose(self, step: Step) -> Choice:
        if self.next_step >= len(self.draws):
            raise ValueError("the replayed pass runs more steps than the recorded one")
        recorded = self.draws[self.next_step]
        self.next_step += 1
        k = step.parser_logits("the replaying policy").size(0)
        expected = k if step.order is None else step.order.numel()
        if recorded.numel() != expected:
            raise ValueError(
                f"step {step.t} of the replayed pass is over a batch of {expected} sentences, "
                f"the recorded one over {recorded.numel()}: not the same batch"
            )
        sentences = step.sentences(k)
        action = recorded[:k] if sentences is None else recorded.index_select(0, sentences)
        action = action.clamp(min=SHIFT)
        if not bool((step.legal(action) == action).all()):
            raise ValueError(f"a recorded move is illegal at step {step.t}: not the same batch")
        return _scored_choice(step, step.legal_log_probs(self.temperature), action)

    def __repr__(self) -> str:
        return f"Replayed({len(self.draws)} steps, temperature={self.temperature})"


def _scored_choice(step: Step, log_probs: torch.Tensor, action: torch.Tensor) -> Choice:
    """``action`` with its log-probability under ``log_probs`` (k, 2) and that distribution's
    entropy. Types: the type classifier's most probable."""
    probs = log_probs.exp()
    log_prob = log_probs.gather(1, action.unsqueeze(1)).squeeze(1)
    # 0 * log 0 = 0 for an illegal move (masked before the product: a where() after it
    # would send NaN gradients through -inf).
    entropy = -(probs * log_probs.masked_fill(probs == 0, 0.0)).sum(dim=1)
    types = step.type_logits.argmax(dim=-1) if step.type_logits is not None else None
    return Choice(action, types=types, log_prob=log_prob, entropy=entropy)


class SoftStrengths(_Tempered):
    """The soft stack's strengths (NSHRDLU Models 3 and 4): p(REDUCE) under the parser's
    softmax at ``temperature``, or, when transitions are given, their one-hot values (the soft
    stack driven by given trees, which equals the thin stack)."""

    traits = PolicyTraits(
        mode=Mode.SOFT,
        caption="the model's soft stack (the tree its parser prefers)",
        drives="soft",
        learns_from_task=True,
        replayable=True,
        legal_by_construction=True,  # the soft stack imposes the rule on its strengths
    )

    def reduce_strength(self, step: Step) -> torch.Tensor:
        assert step.logits is not None  # needs_parser
        if step.given is not None:
            return (step.given == REDUCE).to(step.logits.dtype)
        if self.temperature == 1.0:
            return torch.softmax(step.logits, dim=-1)[:, REDUCE]
        return torch.softmax(step.logits / self.temperature, dim=-1)[:, REDUCE]


class StraightThroughGumbel(_Tempered):
    """Straight-through Gumbel-softmax over SHIFT/REDUCE, on the soft stack. Each step draws
    Gumbel noise ``g`` and takes the move ``argmax(logits + g)`` (a sample of the parser's
    softmax: the Gumbel-max trick) as a strength of exactly 0 or 1, so the soft stack moves as
    a discrete one; the backward pass differentiates ``softmax((logits + g) / temperature)``
    instead. The strength is ``hard + (soft - soft.detach())``: the added term is exactly 0 in
    value (the forward stays discrete to the last bit) and carries the soft gradient. A lower
    ``temperature`` (``parser_temperature``, annealed by the ``parser_temperature_schedule``
    callback) makes the gradient less biased and noisier."""

    traits = PolicyTraits(
        mode=Mode.STRAIGHT_THROUGH,
        caption="the model's parser, Gumbel-sampled (latent-tree training)",
        drives="soft",
        learns_from_task=True,
        replayable=True,
        legal_by_construction=True,
    )

    def reduce_strength(self, step: Step) -> torch.Tensor:
        assert step.logits is not None  # needs_parser
        perturbed = step.logits + self.gumbel_noise(step.logits)
        hard = (perturbed[:, REDUCE] > perturbed[:, SHIFT]).to(step.logits.dtype)
        soft = torch.softmax(perturbed / self.temperature, dim=-1)[:, REDUCE]
        return hard + (soft - soft.detach())

    @staticmethod
    def gumbel_noise(logits: torch.Tensor) -> torch.Tensor:
        """Standard Gumbel noise shaped like ``logits``: -log(-log U), U uniform in (0, 1)."""
        uniform = torch.rand_like(logits).clamp(min=torch.finfo(logits.dtype).tiny)
        return -torch.log(-torch.log(uniform))


def _not_binary(name: str, t: int) -> str:
    return f"{name}.choose returned a move that is neither SHIFT (0) nor REDUCE (1) at step {t}"


def _illegal(name: str, t: int) -> str:
    return (
        f"{name}.choose chose an illegal move at step {t} (REDUCE with fewer than two items on "
        f"the stack, or SHIFT with the buffer empty): pass its moves through "
        f"step.legal(action), which imposes the forced ones"
    )


def _checked_choice(policy: TransitionPolicy, step: Step) -> Tuple[Choice, torch.Tensor]:
    """``policy``'s choice, its shape and dtype checked (shapes only: no host read), and the
    forced moves of each row's stack (a beam's row moves from its parent's): (must_shift,
    must_reduce) stacked, shape (2, k)."""
    choice = policy.choose(step)
    action = choice.action
    must_shift, must_reduce = step.forced()
    if action.shape != must_shift.shape or action.dtype != torch.long:
        raise ValueError(
            f"{type(policy).__name__}.choose returned moves of shape {tuple(action.shape)} and "
            f"dtype {action.dtype} at step {step.t}: one long per running sentence, shape "
            f"{tuple(must_shift.shape)}, is expected"
        )
    forced = torch.stack([must_shift, must_reduce])
    if choice.parents is not None:
        forced = forced.index_select(1, choice.parents)
    return choice, forced


class MoveChecked(TransitionPolicy):
    """``policy`` with every move it chooses checked against the legal-move rule (SHIFT below two
    stack items, REDUCE once the buffer is empty, each move SHIFT = 0 or REDUCE = 1): an illegal
    move is a ValueError naming the policy and the fix, at the step that made it. One host read
    per step: the check of a policy written elsewhere that does not declare itself replayable
    (:func:`with_move_check`)."""

    def __init__(self, policy: TransitionPolicy) -> None:
        self.policy = policy
        # Its checks read values back to the host every step: no CUDA graph can replay it.
        self.traits = replace(policy.traits, replayable=False, legal_by_construction=True)

    def choose(self, step: Step) -> Choice:
        choice, (must_shift, must_reduce) = _checked_choice(self.policy, step)
        action = choice.action
        name = type(self.policy).__name__
        if bool(((action != SHIFT) & (action != REDUCE)).any()):
            raise ValueError(_not_binary(name, step.t))
        if bool((impose_forced(action, must_shift, must_reduce) != action).any()):
            raise ValueError(_illegal(name, step.t))
        return choice

    def reduce_strength(self, step: Step) -> torch.Tensor:
        return self.policy.reduce_strength(step)

    def __repr__(self) -> str:
        return f"MoveChecked({self.policy!r})"


# MoveCheckedOnDevice.first_wrong where no step went wrong.
NO_STEP = 2**62


class MoveCheckedOnDevice(TransitionPolicy):
    """``policy`` (written elsewhere, declared ``replayable``) with its moves checked on the
    device: each step's moves go on legal (a move neither SHIFT nor REDUCE as SHIFT, then the
    forced moves imposed), so the stack never sees a wrong one, and the first step at which the
    policy chose otherwise is kept in a tensor, ``first_wrong``. :meth:`raise_if_illegal` reads
    it once, after the pass (``Spinn.forward``; ``graphs.py`` reads a replay's from its
    outputs), and raises :class:`MoveChecked`'s ValueError. No host read per step, so a CUDA
    graph can replay it."""

    def __init__(self, policy: TransitionPolicy) -> None:
        self.policy = policy
        self.traits = replace(policy.traits, legal_by_construction=True)
        # Shape (2,): the first step of the pass with a move neither SHIFT nor REDUCE, and
        # with an illegal move (NO_STEP: none); None before a pass's first step.
        self.first_wrong: Optional[torch.Tensor] = None

    def choose(self, step: Step) -> Choice:
        choice, (must_shift, must_reduce) = _checked_choice(self.policy, step)
        action = choice.action
        binary = (action == SHIFT) | (action == REDUCE)
        legal = impose_forced(torch.where(binary, action, SHIFT), must_shift, must_reduce)
        wrong = torch.stack([(~binary).any(), (binary & (legal != action)).any()])
        first = torch.where(wrong, step.t, NO_STEP)
        if step.t > 0 and self.first_wrong is not None:
            first = torch.minimum(self.first_wrong, first)
        self.first_wrong = first
        return replace(choice, action=legal)

    def raise_if_illegal(self, first_wrong: Optional[torch.Tensor] = None) -> None:
        """Raises the ValueError of the first wrong move of the last pass, if any (one host
        read). ``first_wrong``: that pass's record, when not this object's (a graph's
        replay)."""
        first_wrong = self.first_wrong if first_wrong is None else first_wrong
        self.first_wrong = None
        if first_wrong is None:
            return
        not_binary, illegal = first_wrong.tolist()
        name = type(self.policy).__name__
        if not_binary <= illegal and not_binary != NO_STEP:
            raise ValueError(_not_binary(name, not_binary))
        if illegal != NO_STEP:
            raise ValueError(_illegal(name, illegal))

    def reduce_strength(self, step: Step) -> torch.Tensor:
        return self.policy.reduce_strength(step)

    def __repr__(self) -> str:
        return f"MoveCheckedOnDevice({self.policy!r})"


def with_move_check(policy: TransitionPolicy) -> TransitionPolicy:
    """``policy`` itself when its moves are legal by construction (its traits say so: this
    package's policies, a checked one) or it drives the soft stack (which imposes the rule on
    its strengths); else it wrapped in a check: :class:`MoveCheckedOnDevice` when it declares
    itself replayable (no host read per step), :class:`MoveChecked` otherwise."""
    traits = policy.traits
    if traits.legal_by_construction or traits.soft:
        return policy
    return MoveCheckedOnDevice(policy) if traits.replayable else MoveChecked(policy)
