"""One rule book (`spinn_core/rules.py`): every rule that rejects a combination of settings is
written there once, and the functions that raise anything else say what they check.

The list below is the count the redesign's second step asked for: each function of the two
packages that raises on its own (outside the rule book) and why that is not a rule on settings
that go together. A new `raise` in an unlisted function fails here until it is either moved into
the rule book or listed with its reason; a listed function that no longer raises leaves the list.
The behaviour tests show the rules at work: a broken combination raises from the rule book, in
the caller's vocabulary, and the core's check is the encoder's.
"""

import ast
import copy
import logging
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Dict, Iterator, Set, Tuple

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder

from spinn_allennlp.classification.dataset_readers import ListOpsReader
from spinn_allennlp.modules import PolicyGradient
from spinn_allennlp.modules.encoder_settings import translate_legacy_keys
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import PROJECT_ROOT
from spinn_allennlp.training.callbacks import ModuleGradientClipping
from spinn_core import rules
from spinn_core import spinn as spinn_module
from spinn_core.policies import BeamMixture, Greedy
from spinn_core.spinn import Spinn

RULE_BOOK = PROJECT_ROOT / "spinn_core" / "rules.py"

# What the rule book holds: its public checks, each rejecting settings that go together badly.
RULES = {
    "check_options",
    "check_policy",
    "check_policy_fits",
    "check_encoder_settings",
    "check_parser_vocabulary",
    "check_parser_tokens",
    "check_legacy_tracker",
    "check_legacy_policy_keys",
    "check_legacy_key_read",
    "check_beam_mixture",
    "check_beam_mixture_nodes",
    "check_levelwise",
    "check_parser_logits",
    "check_parser_training",
    "check_beam_mix",
    "check_policy_gradient",
    "check_updates_taken",
    "check_parser_updates",
    "check_further_updates_made",
    "check_encoder_schedule",
    "check_label_names",
    "check_him_members",
    "check_gradient_clipping",
    "check_validation_metric",
    "check_embedder_feeds_encoder",
    "check_word_vector_size",
    "check_listops_trees",
    "check_typed_reduce_reading",
    "check_parser_archive",
    "check_tree_source_reader",
    "check_reads_examples",
}

ARGUMENT = "one argument of its own: a range, or a name from a list"
TENSORS = "the tensors or objects a call is handed"
DATA = "a file, line or tree it reads"
STATE = "the order of calls, or an invariant of the code"
ENVIRONMENT = "the environment it runs in"

# Every function outside the rule book that raises (ValueError, TypeError, RuntimeError,
# ConfigurationError; the data errors of the readers and tree parsers are not counted), and what
# it checks.
CHECKS_OF_ONE_THING: Dict[str, str] = {
    # spinn_core
    "spinn_core/batch.py::check_batch": TENSORS,
    "spinn_core/batch.py::check_given_transitions": TENSORS,
    "spinn_core/batch.py::check_transition_values": TENSORS,
    "spinn_core/batch.py::check_transitions_tensor": TENSORS,
    "spinn_core/batch.py::check_word_vectors": TENSORS,
    "spinn_core/batch.py::checked_mask": TENSORS,
    "spinn_core/child_sum.py::_raise_first": TENSORS,
    "spinn_core/child_sum.py::check_heads": TENSORS,
    "spinn_core/compositions/registry.py::composition_choice": ARGUMENT,
    "spinn_core/fused/kernels.py::device_functions": ENVIRONMENT,
    # (The fused runner called directly on a pass it does not implement: the picker never
    # does, `fused_refusal` says why.)
    "spinn_core/fused/runner.py::run_fused_thin_stack": STATE,
    "spinn_core/graphs.py::GraphedPasses.__init__": ARGUMENT,
    "spinn_core/graphs.py::_ReplayGuard.backward": STATE,
    "spinn_core/names.py::NameRegistry.register": ARGUMENT,
    "spinn_core/names.py::NameRegistry.register.add": ARGUMENT,
    "spinn_core/parser_network.py::ParserNetwork.__init__": ARGUMENT,
    "spinn_core/policies.py::BeamMixture.choose": STATE,
    "spinn_core/policies.py::BeamMixture.path_logits": STATE,
    "spinn_core/policies.py::BeamSearch.__init__": ARGUMENT,
    "spinn_core/policies.py::BeamSearch.choose": STATE,
    "spinn_core/policies.py::Mixed.__init__": ARGUMENT,
    # A policy written elsewhere: the moves it returned.
    "spinn_core/policies.py::MoveChecked.choose": TENSORS,
    "spinn_core/policies.py::MoveCheckedOnDevice.raise_if_illegal": TENSORS,
    "spinn_core/policies.py::_checked_choice": TENSORS,
    "spinn_core/policies.py::PolicyTraits.__post_init__": ARGUMENT,
    "spinn_core/policies.py::TransitionPolicy.__init_subclass__": ARGUMENT,
    "spinn_core/policies.py::Replayed.choose": STATE,
    "spinn_core/policies.py::Step.forced": STATE,
    "spinn_core/policies.py::_Tempered.__init__": ARGUMENT,
    "spinn_core/policies.py::beam_start_scores": TENSORS,
    "spinn_core/policy_gradient_losses.py::draw_advantages": TENSORS,
    "spinn_core/policy_registry.py::policy_from_config": ARGUMENT,
    "spinn_core/runners/beam.py::_unwrapped": TENSORS,
    "spinn_core/runners/thin_stack.py::_Stack.reorder": STATE,
    "spinn_core/supervision.py::gold_steps": TENSORS,
    "spinn_core/supervision.py::parser_predictions": TENSORS,
    "spinn_core/supervision.py::parser_types": TENSORS,
    "spinn_core/supervision.py::reduce_type_loss": TENSORS,
    "spinn_core/supervision.py::strength_entropy": TENSORS,
    "spinn_core/transitions.py::crop_pad_left": ARGUMENT,
    "spinn_core/transitions.py::crop_tree_left": ARGUMENT,
    # spinn_allennlp
    "spinn_allennlp/classification/dataset_readers/sst_trees.py::SstTreesReader.__init__": (
        ARGUMENT
    ),
    "spinn_allennlp/classification/listops.py::evaluate": DATA,
    "spinn_allennlp/classification/models/tree_node_classifier.py::"
    "TreeNodeClassifier._check_labels": TENSORS,
    "spinn_allennlp/classification/predictors/spinn_classifier.py::"
    "SpinnClassifierPredictor._json_to_instance": DATA,
    "spinn_allennlp/classification/predictors/tree_node_classifier.py::"
    "TreeNodeClassifierPredictor._json_to_instance": DATA,
    "spinn_allennlp/data/binarization.py::binarize": ARGUMENT,
    "spinn_allennlp/data/binarization.py::binarize.join": DATA,
    "spinn_allennlp/data/binarization.py::binarize_labeled": ARGUMENT,
    "spinn_allennlp/data/dataset_readers/shard_summaries.py::ShardedRead.finish": ARGUMENT,
    "spinn_allennlp/data/dataset_readers/tree_dataset_reader.py::TreeDatasetReader.__init__": (
        ARGUMENT
    ),
    "spinn_allennlp/data/dataset_readers/tree_dataset_reader.py::TreeDatasetReader._read": DATA,
    "spinn_allennlp/data/head_rules.py::PosLexicon.__init__": DATA,
    "spinn_allennlp/data/paths.py::expand_path": ENVIRONMENT,
    "spinn_allennlp/data/paths.py::expand_path.replace": ENVIRONMENT,
    "spinn_allennlp/data/tree_sources/benepar_trees.py::BeneparTrees.__init__": ARGUMENT,
    "spinn_allennlp/data/tree_sources/benepar_trees.py::BeneparTrees.parser": ENVIRONMENT,
    # The archive: the kinds of model the demo serves.
    "spinn_allennlp/demo/server.py::load_predictor": ARGUMENT,
    "spinn_allennlp/modules/input_checks.py::check_word_vector_dtype": TENSORS,
    "spinn_allennlp/modules/own_parser.py::OwnParser.__init__": ARGUMENT,
    "spinn_allennlp/modules/padded_lstm.py::PaddedLstmSeq2VecEncoder.forward": TENSORS,
    "spinn_allennlp/modules/policy_gradient.py::PolicyGradient._keep_update": STATE,
    "spinn_allennlp/modules/sentence_batches.py::stack_batches": TENSORS,
    "spinn_allennlp/pair_classification/models/him.py::archive_him": ARGUMENT,
    "spinn_allennlp/pair_classification/predictors/spinn_nli.py::"
    "SpinnNliPredictor._json_to_instance": DATA,
    "spinn_allennlp/relatedness/dataset_readers/sick.py::SickReader.__init__": ARGUMENT,
    "spinn_allennlp/relatedness/dataset_readers/sick.py::SickReader._read": DATA,
    "spinn_allennlp/relatedness/models/tree_relatedness.py::TreeRelatedness.forward": TENSORS,
    "spinn_allennlp/relatedness/predictors/tree_relatedness.py::"
    "TreeRelatednessPredictor._json_to_instance": DATA,
    "spinn_allennlp/training/callbacks/encoder_schedule.py::EncoderSchedule.__init__": ARGUMENT,
    "spinn_allennlp/training/callbacks/module_gradient_clipping.py::"
    "ModuleGradientClipping.__init__": ARGUMENT,
    "spinn_allennlp/training/callbacks/parser_temperature_schedule.py::"
    "ParserTemperatureSchedule.__init__": ARGUMENT,
    "spinn_allennlp/training/callbacks/parser_warmup.py::ParserWarmup.__init__": ARGUMENT,
    "spinn_allennlp/training/callbacks/self_transition_schedule.py::"
    "SelfTransitionSchedule.__init__": ARGUMENT,
    "spinn_allennlp/training/learning_rate_schedulers/reduce_on_plateau.py::"
    "ReduceOnPlateau.__init__": ARGUMENT,
    "spinn_allennlp/training/learning_rate_schedulers/step_decay_per_batch.py::"
    "StepDecayPerBatch.__init__": ARGUMENT,
    "spinn_allennlp/training/metrics/parse_metrics.py::ParseMetrics.__call__": TENSORS,
}

# Raised for what a file or tensor holds, not for settings: not counted.
DATA_ERRORS = {
    "AttributeError",
    "FileNotFoundError",
    "ImportError",
    "InvalidTransitionsError",
    "LeftOutByLength",
    "MalformedExampleError",
    "MalformedExpressionError",
    "MalformedParseError",
    "MalformedTreeError",
    "NotImplementedError",
    "TreeFormatError",
    "TreeSourceError",
}
# Where the rule book's errors become AllenNLP's (it re-raises what the rules raised).
TRANSLATION = "spinn_allennlp/settings_errors.py::configuration_errors"


def raising_functions(path: Path) -> Iterator[Tuple[str, Set[str]]]:
    """(qualified name, the exceptions it raises by name) of each function in ``path`` that
    raises one (a bare ``raise`` re-raises: not counted)."""

    def visit(node: ast.AST, prefix: str) -> Iterator[Tuple[str, Set[str]]]:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                raised = set()
                for sub in ast.walk(child):
                    if isinstance(sub, ast.Raise) and sub.exc is not None:
                        exc = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
                        raised.add(getattr(exc, "id", getattr(exc, "attr", "?")))
                if raised - DATA_ERRORS - {"AssertionError"}:
                    yield name, raised - DATA_ERRORS
            yield from visit(child, name + ".")

    yield from visit(ast.parse(path.read_text()), "")


def package_raisers() -> Dict[str, Set[str]]:
    found = {}
    for package in ("spinn_core", "spinn_allennlp"):
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            relative = path.relative_to(PROJECT_ROOT).as_posix()
            if path == RULE_BOOK or "/testing/" in relative:
                continue
            for name, raised in raising_functions(path):
                found[f"{relative}::{name}"] = raised
    return found


def test_every_function_that_raises_outside_the_rule_book_checks_one_thing():
    found = package_raisers()
    unlisted = sorted(set(found) - set(CHECKS_OF_ONE_THING) - {TRANSLATION})
    assert not unlisted, (
        f"these raise outside spinn_core/rules.py: move a rule on settings that go together "
        f"into the rule book, or list what they check: {unlisted}"
    )
    gone = sorted(set(CHECKS_OF_ONE_THING) - set(found))
    assert not gone, f"listed, but no longer raising: {gone}"


def test_the_rule_book_holds_the_rules_and_nothing_else_raises_its_error():
    tree = ast.parse(RULE_BOOK.read_text())
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }
    assert set(functions) == RULES
    assert len(RULES) == 31
    for name, function in functions.items():
        # Each raises, directly or through `_raise_first` (the first broken rule of a list) or
        # another rule.
        calls = {
            getattr(node.func, "id", None)
            for node in ast.walk(function)
            if isinstance(node, ast.Call)
        }
        raises = any(isinstance(node, ast.Raise) for node in ast.walk(function))
        assert raises or "_raise_first" in calls or calls & RULES, name
    for where, raised in package_raisers().items():
        assert "SettingsError" not in raised or where == TRANSLATION, where


def raised_in_rule_book(error: BaseException) -> bool:
    """Whether the innermost frame that raised ``error`` (or the error it was raised from
    inside `configuration_errors`) is the rule book's."""
    frames = traceback.extract_tb(error.__traceback__)
    cause = error.__context__ if error.__cause__ is None else error.__cause__
    if cause is not None and Path(frames[-1].filename).name == "settings_errors.py":
        frames = traceback.extract_tb(cause.__traceback__)
    return Path(frames[-1].filename) == RULE_BOOK


def spinn_encoder(**settings):
    config = {"type": "spinn", "input_dim": 6, "hidden_dim": 5, **settings}
    return Seq2VecEncoder.from_params(Params(config))


def fake_trainer(accumulation: int) -> SimpleNamespace:
    # What module_gradient_clipping reads of a GradientDescentTrainer.
    model = torch.nn.Linear(2, 2)
    return SimpleNamespace(model=model, _scaler=None, _num_gradient_accumulation_steps=accumulation)


def core_pass_without_parser() -> None:
    model = Spinn(input_dim=6, hidden_dim=5)
    model(torch.randn(1, 3, 6), torch.ones(1, 3, dtype=torch.bool), policy=Greedy())


# A broken combination in each part of the project, with the key its message names.
BROKEN: Dict[str, Tuple[Callable[[], object], str]] = {
    "core: a parser without a tracker": (
        lambda: Spinn(input_dim=6, hidden_dim=5, predict_transitions=True),
        "tracking_dim",
    ),
    "core: a pass whose policy reads a parser the model lacks": (
        core_pass_without_parser,
        "needs_parser",
    ),
    "encoder: a tracker nothing reads": (
        lambda: spinn_encoder(tracker={"tracking_dim": 4, "composition_reads_tracker": False}),
        "tracker.composition_reads_tracker",
    ),
    "encoder: summaries on the soft stack": (
        lambda: spinn_encoder(
            tracker={"tracking_dim": 4, "predict_transitions": True, "summary_dim": 3},
            training_policy={"type": "soft"},
        ),
        "tracker.summary_dim",
    ),
    "legacy keys: a soft-stack key without the soft stack": (
        lambda: translate_legacy_keys(
            {"tracking_dim": 4, "predict_transitions": True, "soft_at_test_time": True}
        ),
        "soft_stack",
    ),
    "policy: soft top-k with a beam of one": (
        lambda: BeamMixture(width=1, soft_top_k=True),
        "soft_top_k",
    ),
    "policy gradient: several draws and PPO": (
        lambda: PolicyGradient(draws=2, updates_per_batch=2),
        "updates_per_batch",
    ),
    "callback: clipping under gradient accumulation": (
        lambda: ModuleGradientClipping("/tmp", groups=[["weight"]]).on_start(fake_trainer(2)),
        "num_gradient_accumulation_steps",
    ),
    "reader: a ListOps tree shape without gold trees": (
        lambda: ListOpsReader(tree_shape="operator_last", gold_trees=False),
        "gold_trees",
    ),
    "reader: REDUCE types with cropping": (
        lambda: SnliTransitionsReader(reduce_types=True, crop_pad_length=10),
        "crop_pad_length",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_a_broken_combination_is_refused_by_the_rule_book(case):
    build, key = BROKEN[case]
    with pytest.raises(ValueError) as raised:
        build()
    assert key in str(raised.value)
    assert raised_in_rule_book(raised.value), traceback.format_exception(raised.value)
    if case.split(":")[0] not in ("core", "policy"):
        # The plugin's components: as AllenNLP reports a config's errors.
        assert isinstance(raised.value, ConfigurationError)


def test_the_core_and_the_encoder_check_with_the_same_code(monkeypatch):
    """The encoder's check runs the core's (`check_options`, `check_policy_fits`) on the
    options its blocks make, naming its own keys; a broken value gets the same rule's message
    in the two vocabularies."""
    calls = []
    original = rules.check_options

    def spy(*args, **kwargs):
        calls.append(kwargs.get("names", rules.CORE_NAMES))
        return original(*args, **kwargs)

    monkeypatch.setattr(rules, "check_options", spy)
    monkeypatch.setattr(spinn_module, "check_options", spy)
    spinn_encoder(tracker={"tracking_dim": 4})
    assert calls[0] is rules.ENCODER_NAMES  # the encoder's config, on its keys
    assert calls[1] is rules.CORE_NAMES  # then the core it builds, on its arguments
    monkeypatch.undo()
    assert spinn_module.check_options is rules.check_options

    with pytest.raises(ValueError) as core:
        Spinn(input_dim=6, hidden_dim=5, projection_dropout=1.5)
    with pytest.raises(ConfigurationError) as encoder:
        spinn_encoder(projection={"dropout": 1.5})
    assert str(core.value) == str(encoder.value).replace("projection.dropout", "projection_dropout")
    assert str(encoder.value).startswith("projection.dropout is a drop rate")


def test_a_model_with_its_encoder_is_checked_by_the_rule_book(caplog):
    """What trains a parser (the model's and the encoder's transition loss, counted twice)."""
    vocab = Vocabulary({"tokens": {"a": 1}, "labels": {"x": 1, "y": 1}})
    config = {
        "type": "spinn_classifier",
        "text_field_embedder": {
            "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}
        },
        "encoder": {
            "type": "spinn",
            "input_dim": 6,
            "hidden_dim": 5,
            "tracker": {"tracking_dim": 4, "predict_transitions": True},
            "transition_loss_weight": 1.0,
        },
        "transition_loss_weight": 1.0,
    }
    with pytest.raises(ConfigurationError) as raised:
        Model.from_params(vocab=vocab, params=Params(copy.deepcopy(config)))
    assert "would count twice" in str(raised.value) and raised_in_rule_book(raised.value)
    with caplog.at_level(logging.WARNING, logger="spinn_core.rules"):
        config["encoder"]["transition_loss_weight"] = 0.0
        config["transition_loss_weight"] = 0.0
        Model.from_params(vocab=vocab, params=Params(copy.deepcopy(config)))
    assert "nothing trains the encoder's parser" in caplog.text
