"""The rules a model checks on its encoder when it is built: what trains the encoder's parser
(`check_parser_training`) and whether the model reads what a beam mixture asks of it
(`check_beam_mix`); with the embedder's size (`input_checks.check_embedder_feeds_encoder`), what
`SentenceEncoderModel` checks. The encoder's own settings are checked by `encoder_settings`."""

import logging
from typing import Any, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2VecEncoder

from spinn_allennlp.modules.tree_encoder import has_parser
from spinn_core.policies import Given

logger = logging.getLogger(__name__)


def check_parser_training(
    model: str,
    encoder: Seq2VecEncoder,
    transition_loss_weight: float,
    policy_gradient: Optional[Any] = None,
) -> None:
    """What a model can tell about its parser when it is built: a setting that trains a parser
    the encoder does not have is an error, a transition loss set twice (the model's and the
    encoder's own) is an error, and a parser that nothing trains (no transition loss, no
    policy gradient, no soft stack) is a warning: it would pick every tree with an untrained
    argmax. `model`: the model's registered name, for the messages."""
    if not has_parser(encoder):
        for setting, value in (
            ("transition_loss_weight", transition_loss_weight),
            ("policy_gradient", policy_gradient),
        ):
            if value:
                raise ConfigurationError(
                    f"{model}: {setting} trains a parser, and this encoder has none: leave it "
                    f"out, or give the encoder one (a spinn encoder with a tracker block with "
                    f"predict_transitions: true, or a parser block)"
                )
        return
    # The default training policy (the given trees) is the one a policy gradient replaces.
    training_policy = getattr(encoder, "training_policy", None)
    if policy_gradient is not None and type(training_policy) not in (type(None), Given):
        raise ConfigurationError(
            f"{model}: the policy_gradient samples the training trees itself, so the encoder's "
            f"training_policy would not be followed: leave one of them out"
        )
    encoder_weight = getattr(encoder, "transition_loss_weight", 0.0)
    if transition_loss_weight and encoder_weight:
        raise ConfigurationError(
            f"{model}: both the model's transition_loss_weight ({transition_loss_weight}) and "
            f"the encoder's ({encoder_weight}) are set, so the transition loss would count "
            f"twice: keep the model's and set encoder.transition_loss_weight to 0"
        )
    if not (
        transition_loss_weight
        or encoder_weight
        or policy_gradient
        or getattr(encoder, "parser_learns_from_task", False)
    ):
        logger.warning(
            "%s: nothing trains the encoder's parser (transition_loss_weight is 0, no "
            "policy_gradient, no soft training_policy): it will choose every tree it parses "
            "with an untrained argmax. Set transition_loss_weight above 0 (the SPINN paper's "
            "alpha, e.g. 3.9), or a policy_gradient to train it from the task alone; ignore "
            "this for a parser trained elsewhere and loaded.",
            model,
        )


def check_beam_mix(model: str, encoder: Seq2VecEncoder, classifies_each_tree: bool) -> None:
    """A beam mixture whose `mix` asks the model to classify each tree alone ("predictions",
    "best_tree") needs a model that does (`classifies_each_tree`: `spinn_classifier`,
    `spinn_nli`); any other model would read the roots' mixture instead and train as
    `mix: "roots"` without a word, so it is a `ConfigurationError` there."""
    policy = getattr(encoder, "training_policy", None)
    mix = getattr(policy, "mix", "roots") if getattr(policy, "mixes", False) else "roots"
    if mix != "roots" and not classifies_each_tree:
        raise ConfigurationError(
            f"{model}: the encoder's training_policy has mix {mix!r}, which asks the model to "
            f"classify each of the beam's trees alone, and {model} reads one sentence vector: "
            f'set mix to "roots" (the roots\' mixture), or use spinn_classifier or spinn_nli'
        )
