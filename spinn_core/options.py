"""Which arguments of the core go together, each message naming the one to change.

:func:`check_options` runs once when a :class:`~spinn_core.spinn.Spinn` is built;
:func:`check_policy` before each pass, for what depends on the call (the policy and the
tensors passed). The ``spinn`` encoder's config has its own rule book, on its keys
(``spinn_allennlp.modules.encoder_settings``), checked before the core is built.
"""

from spinn_core.cells import COMPOSITIONS
from spinn_core.policies import TransitionPolicy

LEAVES = ("projection", "cell")


def check_options(
    input_dim: int,
    hidden_dim: int,
    tracking_dim: int = 0,
    predict_transitions: bool = False,
    composition: str = "treelstm",
    projection_dropout: float = 0.0,
    projection_batch_norm: bool = False,
    node_input_dim: int = 0,
    leaf: str = "projection",
    reduce_types: int = 0,
    summary_dim: int = 0,
) -> None:
    """Raises ValueError for arguments of the core's :class:`~spinn_core.spinn.Spinn` that
    cannot work together, naming the one to change. (The ``spinn`` encoder's own settings —
    its blocks, policies and loss weights — have their rule book in
    ``spinn_allennlp.modules.encoder_settings``.)"""
    if input_dim < 1 or hidden_dim < 1:
        raise ValueError(
            f"input_dim and hidden_dim must be positive, got {input_dim}, {hidden_dim}"
        )
    if tracking_dim < 0 or summary_dim < 0 or node_input_dim < 0 or reduce_types < 0:
        raise ValueError(
            "tracking_dim, summary_dim, node_input_dim and reduce_types must be >= 0, got "
            f"{tracking_dim}, {summary_dim}, {node_input_dim}, {reduce_types}"
        )
    if composition not in COMPOSITIONS:
        raise ValueError(f"composition must be one of {sorted(COMPOSITIONS)}, got {composition!r}")
    if leaf not in LEAVES:
        raise ValueError(f"leaf must be 'projection' or 'cell', got {leaf!r}")
    needs_tracker = {
        "predict_transitions=true (a parser)": predict_transitions,
        "reduce_types > 0 (typed REDUCE)": reduce_types > 0,
        "summary_dim > 0 (stack and buffer summaries)": summary_dim > 0,
    }
    for what, asked in needs_tracker.items():
        if asked and tracking_dim <= 0:
            raise ValueError(f"{what} needs a tracking LSTM: set tracking_dim > 0")
    if not 0.0 <= projection_dropout < 1.0:
        raise ValueError(
            f"projection_dropout is a drop rate in [0, 1), got {projection_dropout} (the "
            "paper's tables give keep rates: drop = 1 - keep)"
        )
    if leaf == "cell":
        if node_input_dim != input_dim:
            raise ValueError(
                "leaf='cell' feeds the word vectors through the node input: node_input_dim "
                f"({node_input_dim}) must equal input_dim ({input_dim})"
            )
        if tracking_dim > 0:
            raise ValueError("leaf='cell' is for models without tracking: set tracking_dim = 0")
        if projection_dropout or projection_batch_norm:
            raise ValueError("projection_dropout and projection_batch_norm need leaf='projection'")


def check_policy(
    policy: TransitionPolicy,
    has_parser: bool,
    has_type_classifier: bool,
    num_reduce_types: int,
    node_input_dim: int,
    has_summaries: bool,
    transitions_given: bool,
    reduce_types_given: bool,
    node_inputs_given: bool,
) -> None:
    """Raises ValueError when a model with these parts cannot run ``policy`` on the tensors
    passed (whether transitions, REDUCE types and node inputs were given)."""
    if policy.needs_parser and not has_parser:
        raise ValueError(
            f"{type(policy).__name__} (mode {str(policy.mode)!r}) reads the parser's logits "
            f"(needs_parser = True, the TransitionPolicy default), so it needs a parser, and "
            f"this model has none: give it one (predict_transitions=true with a "
            f"tracking_dim, or a parser block), or, for a policy of your own that does not "
            f"read step.logits, set needs_parser = False on its class"
        )
    if policy.needs_given and not transitions_given:
        raise ValueError(f"mode {str(policy.mode)!r} needs given transitions to mix with")
    if node_inputs_given != (node_input_dim > 0):
        raise ValueError(
            f"node_inputs must be given exactly when node_input_dim > 0 "
            f"(node_input_dim = {node_input_dim})"
        )
    if policy.soft and node_input_dim:
        raise ValueError("node inputs are not implemented on the soft stack")
    if policy.soft and has_summaries:
        raise ValueError(
            "stack and buffer summaries are not implemented on the soft stack: set summary_dim = 0"
        )
    if (
        num_reduce_types
        and not has_type_classifier
        and not (reduce_types_given and policy.follows_given)
    ):
        raise ValueError(
            "typed REDUCE without a type classifier (predict_transitions=false) follows given "
            "reduce_types only"
        )
