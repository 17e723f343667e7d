"""The base of our models on one text-field embedder and one sentence encoder (`spinn_classifier`,
`spinn_nli`, `tree_node_classifier`, `tree_relatedness`): what each checks of the two when it is
built and holds, and what it asks of its encoder."""

from typing import Any, Dict, Optional

from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder

from spinn_allennlp.modules.added_losses import AddedLosses, encoder_loss_metrics
from spinn_allennlp.modules.input_checks import check_embedder_feeds_encoder
from spinn_allennlp.modules.policy_gradient import PolicyGradient
from spinn_allennlp.modules.tree_encoder import has_parser
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules
from spinn_core.policies import Given


class SentenceEncoderModel(Model):
    """A `Model` whose constructor, after `Model.__init__`, hands its embedder and encoder to
    `_take_encoder`: checked together by the rule book (`spinn_core.rules`: the embedder's
    output size is the encoder's input size; what trains the parser, `check_parser_training`;
    a beam mixture's `mix`, `check_beam_mix`) and kept as `_embedder` and `_encoder`, with the
    model's parser training (`_transition_loss_weight`, `_policy_gradient`)."""

    # Whether the model classifies each of a beam mixture's trees alone (`check_beam_mix`).
    classifies_each_tree = False

    def _take_encoder(
        self,
        name: str,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        transition_loss_weight: Optional[float] = None,
        policy_gradient: Optional[PolicyGradient] = None,
    ) -> None:
        """`name`: the model's registered name, for the messages; `transition_loss_weight`:
        None for a model that trains no parser (what trains one is then not checked)."""
        check_embedder_feeds_encoder(text_field_embedder, encoder)
        # (Any Seq2VecEncoder: a spinn encoder's policies and weights where it has them.)
        training_policy = getattr(encoder, "training_policy", None)
        with configuration_errors():
            if transition_loss_weight is not None:
                rules.check_parser_training(
                    name,
                    has_parser(encoder),
                    transition_loss_weight,
                    policy_gradient,
                    training_policy_is_given=type(training_policy) in (type(None), Given),
                    encoder_transition_loss_weight=getattr(encoder, "transition_loss_weight", 0.0),
                    parser_learns_from_task=getattr(encoder, "parser_learns_from_task", False),
                )
            mixes = getattr(training_policy, "mixes", False)
            mix = getattr(training_policy, "mix", "roots") if mixes else "roots"
            rules.check_beam_mix(name, mix, self.classifies_each_tree)
        self._embedder = text_field_embedder
        self._encoder = encoder
        self._transition_loss_weight = transition_loss_weight or 0.0
        self._policy_gradient = policy_gradient
        # The terms the encoder adds (its transition loss, a soft stack's strength entropy) go
        # into this model's loss (`_with_encoder_losses`), where the trainer reports them.
        added = getattr(encoder, "added_losses", None)
        if isinstance(added, AddedLosses):
            added.booked = True

    def _with_encoder_losses(self, output: Dict[str, Any]) -> Dict[str, Any]:
        """`output` with the terms the encoder added in this pass in its `loss` (when the pass
        computed one; without, they are dropped: nothing is trained then)."""
        added = getattr(self._encoder, "added_losses", None)
        terms = added.take() if isinstance(added, AddedLosses) else None
        if terms is not None and "loss" in output:
            output["loss"] = output["loss"] + terms
        return output

    def _encoder_loss_metrics(self, reset: bool) -> Dict[str, float]:
        """The mean of each term the encoder added per training batch (`encoder_NAME`)."""
        return encoder_loss_metrics(self._encoder, reset)

    @property
    def has_parser(self) -> bool:
        """Whether the encoder chooses its own transitions."""
        return has_parser(self._encoder)
