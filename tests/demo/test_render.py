"""The demo's SVG/HTML renderer: structure of the drawn trees, escaping, hostile sizes."""

import json
import random
import re
import xml.etree.ElementTree as ET

import pytest

from spinn_allennlp import plugin  # noqa: F401  (registers the tree sources)
from spinn_allennlp.data.tree_sources import TreeSource
from spinn_allennlp.demo.render import (
    SOURCE_DESCRIPTIONS,
    TreeFormatError,
    parse_tree,
    prediction_html,
    predictions_page,
    tree_svg,
)
from spinn_allennlp.demo.static import main as static_main
from spinn_allennlp.demo.static import read_predictions
from spinn_allennlp.modules.tree_encoder import DEFAULT_TREE, GOLD
from spinn_allennlp.testing import FIXTURES_ROOT, random_transitions
from spinn_core.output import GIVEN, Mode
from spinn_core.policies import Replayed
from spinn_core.policy_registry import POLICIES
from spinn_core.transitions import (
    left_branching_transitions,
    right_branching_transitions,
    transitions_to_string,
)

SVG = "{http://www.w3.org/2000/svg}"
PREDICTIONS = FIXTURES_ROOT / "pair_classification" / "archives"
PREDICTIONS_FILE = PREDICTIONS / "spinn_v0.1.0.raw_pairs.predictions.jsonl"


def drawn(svg: str):
    """(words of the leaves in order, number of inner nodes, number of edges) of an SVG."""
    root = ET.fromstring(svg)  # also checks it is well-formed XML
    leaves = [node.text for node in root.iter(f"{SVG}text") if node.get("class") == "leaf"]
    inner = [node for node in root.iter(f"{SVG}circle") if node.get("class") == "inner"]
    return leaves, len(inner), len(list(root.iter(f"{SVG}line")))


@pytest.mark.parametrize("num_words", [1, 2, 3, 7, 40])
def test_a_binary_tree_of_n_words_has_2n_minus_1_nodes(num_words):
    rng = random.Random(num_words)
    words = [f"w{i}" for i in range(num_words)]
    for _ in range(5):
        text = transitions_to_string(words, random_transitions(num_words, rng))
        leaves, inner, edges = drawn(tree_svg(text))
        assert leaves == words
        assert len(leaves) + inner == 2 * num_words - 1
        assert edges == 2 * (num_words - 1)  # every node but the root hangs from one edge


def test_a_one_word_tree_is_a_single_leaf():
    leaves, inner, edges = drawn(tree_svg("Hello"))
    assert (leaves, inner, edges) == (["Hello"], 0, 0)


def test_leaves_carry_the_words_escaped():
    hostile = ["<script>alert(1)</script>", "a&b", '"quoted"', "</svg><img>", "Ω☃𝔘"]
    text = transitions_to_string(hostile, right_branching_transitions(len(hostile)))
    svg = tree_svg(text, label='"><script>')
    assert "<script>" not in svg and "<img>" not in svg
    leaves, inner, _ = drawn(svg)  # parses: nothing broke out of its element
    assert leaves == hostile and inner == len(hostile) - 1


@pytest.mark.parametrize("make", [left_branching_transitions, right_branching_transitions])
def test_a_300_word_chain_is_drawn_without_recursion(make):
    words = [f"word{i}" for i in range(300)]
    leaves, inner, edges = drawn(tree_svg(transitions_to_string(words, make(300))))
    assert leaves == words and inner == 299 and edges == 598


def test_node_positions_nest():
    svg = tree_svg("( ( A dog ) ( runs . ) )")
    root = ET.fromstring(svg)
    circles = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle")]
    words = {t.text: float(t.get("x")) for t in root.iter(f"{SVG}text")}
    (root_x, root_y), (left_x, left_y), (right_x, right_y) = circles
    assert words["A"] < left_x < words["dog"] < root_x < words["runs"] < right_x < words["."]
    assert root_y < left_y == right_y  # the root is above its children
    assert int(root.get("width")) > words["."] and int(root.get("height")) > left_y


@pytest.mark.parametrize("text", ["( a b", "a b )", "( )", "( a ) b", "a b"])
def test_malformed_tree_strings_raise(text):
    with pytest.raises(TreeFormatError):
        parse_tree(text)


def test_no_words_no_tree():
    assert parse_tree("") is None
    assert "no tree" in tree_svg("")


def test_prediction_html_shows_probabilities_sources_and_both_trees():
    prediction = json.loads(PREDICTIONS_FILE.read_text().splitlines()[1])
    section = prediction_html(prediction)
    for label, prob in prediction["label_probs"].items():
        assert f'<th>{label}</th><td class="prob">{prob:.3f}</td>' in section
    assert section.count("<svg") == 2
    assert section.count("the model&#x27;s own parser") == 2  # source "predicted", escaped
    premise_svg = re.search(r'id="premise-tree".*?(<svg.*?</svg>)', section).group(1)
    words = prediction["premise_tree"].replace("(", " ").replace(")", " ").split()
    assert drawn(premise_svg)[0] == words


def test_errors_and_garbage_render_as_errors_escaped():
    section = prediction_html({"error": "<b>bad</b>", "input": {"premise": "<i>x</i>"}})
    assert 'class="error"' in section and "<b>bad" not in section and "<i>x" not in section
    assert 'class="error"' in prediction_html(["not", "a", "dict"])
    broken = prediction_html({"label_probs": {"a": 1.0}, "premise_tree": "( ( a b )"})
    assert "cannot draw this tree" in broken and "<svg" not in broken.split("hypothesis")[0]


def test_static_page_of_a_predictions_file_with_bad_lines(tmp_path):
    lines = PREDICTIONS_FILE.read_text().splitlines()
    source = tmp_path / "predictions.jsonl"
    bad = ['{"error": "the premise is empty", "input": {"premise": ""}}', "{truncated"]
    source.write_text("\n".join(lines[:2] + bad + lines[2:] + [""]) + "\n")
    assert len(read_predictions(source)) == len(lines) + 2
    output = tmp_path / "page.html"
    assert static_main([str(source), "-o", str(output)]) == 0
    page = output.read_text()
    assert page.count("<svg") == 2 * len(lines)
    assert page.count('class="prediction"') == len(lines) + 2
    assert "the premise is empty" in page and "not JSON" in page
    assert predictions_page([]).count("No predictions") == 1


def test_every_transitions_source_a_model_can_report_has_a_caption():
    """The renderer keeps the vocabulary of `modules.tree_encoder` as text: every value must
    have its own caption (the encoder's modes, the default tree, gold, every tree source)."""
    values = {mode for mode in Mode if mode != GIVEN} | {DEFAULT_TREE, GOLD}
    values |= {
        name
        for name in TreeSource.list_available()
        if TreeSource.resolve_class_name(name)[0].__module__.startswith("spinn_allennlp.")
    }  # (other tests register tree sources of their own)
    assert values <= set(SOURCE_DESCRIPTIONS), values - set(SOURCE_DESCRIPTIONS)


def test_the_captions_are_the_ones_the_policies_declare():
    """The renderer keeps its captions as text (it imports the standard library alone): each
    mode's is the caption its policies declare (`PolicyTraits.caption`)."""
    policies = [cls for cls in POLICIES.classes.values() if cls.__module__ == "spinn_core.policies"]
    for cls in [*policies, Replayed]:
        if cls.traits.mode != GIVEN:  # a given tree's caption is its source's
            assert SOURCE_DESCRIPTIONS[cls.traits.mode] == cls.traits.caption, cls
