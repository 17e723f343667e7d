"""Trees and predictions as SVG and HTML, with the standard library alone.

A tree arrives as the `spinn_nli` predictor writes it, the bracketed string of
`spinn_allennlp.data.trees.readable_tree` (``( ( A dog ) ( runs . ) )``, one word for a
one-word sentence, "" for none). Words sit on one line at the bottom in reading order; an inner
node sits above the middle of its span, at a height given by its own height (leaves 0, a node
one above its highest child), so the root is on top. Every piece of text from outside (words,
sources, labels, error messages) is escaped: a sentence is hostile input.
"""

import html
import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

# Drawing sizes, in SVG user units (pixels).
FONT_SIZE = 13
CHAR_WIDTH = 7.5  # a rough average width of a character at FONT_SIZE
WORD_GAP = 10
MIN_SLOT = 24
MARGIN = 12
NODE_RADIUS = 3
MAX_LEVEL_GAP = 22
MIN_LEVEL_GAP = 6
TARGET_TREE_HEIGHT = 220  # deep trees are squeezed towards this height, not below MIN_LEVEL_GAP

# What `*_transitions_source` values mean, for the captions: the vocabulary of
# `spinn_allennlp.modules.tree_encoder` (kept here as text, the renderer importing nothing but
# the standard library; a test checks that every value it can take has a caption, and that a
# mode's is the caption its policies declare: `spinn_core.policies.PolicyTraits.caption`).
SOURCE_DESCRIPTIONS = {
    "gold": "the corpus's binary parse",
    "predicted": "the model's own parser",
    "mixed": "the model's parser and given transitions",
    "soft": "the model's soft stack (the tree its parser prefers)",
    "sampled": "the model's parser, sampled (latent-tree training)",
    "straight_through": "the model's parser, Gumbel-sampled (latent-tree training)",
    "beam": "the most probable tree of the model's beam (beam training)",
    "balanced default tree": "the encoder's balanced default tree (no parser, no tree source)",
    "balanced": "tree source: balanced",
    "left_branching": "tree source: left-branching",
    "right_branching": "tree source: right-branching",
    "benepar": "tree source: benepar parser",
    "spinn": "tree source: a full SPINN's parser",
}


class TreeFormatError(ValueError):
    """A tree string that is not a well-formed bracketing."""


@dataclass
class Tree:
    """A parsed tree: node 0 is the root; `children[i]` lists node i's children in order (empty
    for a leaf); `words[i]` is a leaf's word ("" for an inner node)."""

    children: List[List[int]] = field(default_factory=list)
    words: List[str] = field(default_factory=list)

    @property
    def leaves(self) -> List[int]:
        """The leaves in reading order."""
        order: List[int] = []
        pending = [0] if self.children else []
        while pending:  # iterative: a 300-word chain is 300 deep
            node = pending.pop()
            if self.children[node]:
                pending.extend(reversed(self.children[node]))
            else:
                order.append(node)
        return order


def parse_tree(text: str) -> Optional[Tree]:
    """The tree of a bracketed string, None for "" (no words). Raises `TreeFormatError` for
    unbalanced brackets, empty brackets or more than one tree."""
    symbols = text.split()
    if not symbols:
        return None
    tree = Tree()
    open_nodes: List[int] = []
    finished_roots = 0
    for symbol in symbols:
        if symbol == ")":
            if not open_nodes:
                raise TreeFormatError("a ')' closes nothing")
            node = open_nodes.pop()
            if not tree.children[node]:
                raise TreeFormatError("empty brackets")
            if not open_nodes:
                finished_roots += 1
            continue
        if finished_roots or (not open_nodes and tree.children):
            raise TreeFormatError("more than one tree")
        node = len(tree.children)
        tree.children.append([])
        tree.words.append("" if symbol == "(" else symbol)
        if open_nodes:
            tree.children[open_nodes[-1]].append(node)
        if symbol == "(":
            open_nodes.append(node)
    if open_nodes:
        raise TreeFormatError("a '(' is never closed")
    return tree


def _word_width(word: str) -> float:
    return max(MIN_SLOT, len(word) * CHAR_WIDTH + WORD_GAP)


def _layout(tree: Tree) -> Tuple[List[float], List[int], int]:
    """x of every node's centre, height of every node (leaves 0), and the root's height."""
    num_nodes = len(tree.children)
    x = [0.0] * num_nodes
    height = [0] * num_nodes
    cursor = float(MARGIN)
    for leaf in tree.leaves:
        width = _word_width(tree.words[leaf])
        x[leaf] = cursor + width / 2
        cursor += width
    # Children are numbered after their parents (pre-order), so going backwards visits every
    # child before its parent.
    for node in range(num_nodes - 1, -1, -1):
        kids = tree.children[node]
        if kids:
            x[node] = (x[kids[0]] + x[kids[-1]]) / 2
            height[node] = 1 + max(height[kid] for kid in kids)
    return x, height, height[0]


def tree_svg(text: str, label: str = "tree") -> str:
    """An SVG drawing of the bracketed tree `text` (class "tree"): a `<text class="leaf">` per
    word, a `<circle class="inner">` per inner node and a `<line>` per edge, so a binary tree
    of N words has N + (N - 1) = 2N - 1 nodes. `label` names it for screen readers."""
    tree = parse_tree(text)
    if tree is None:
        return '<p class="no-tree">(no words, no tree)</p>'
    x, height, root_height = _layout(tree)
    gap = float(MAX_LEVEL_GAP)
    if root_height:
        gap = max(MIN_LEVEL_GAP, min(MAX_LEVEL_GAP, TARGET_TREE_HEIGHT / root_height))
    text_band = FONT_SIZE + 4
    top = MARGIN + NODE_RADIUS

    def y(node: int) -> float:
        return top + (root_height - height[node]) * gap

    leaves = tree.leaves
    width = math.ceil(max(x[leaf] + _word_width(tree.words[leaf]) / 2 for leaf in leaves) + MARGIN)
    svg_height = math.ceil(top + root_height * gap + text_band + MARGIN)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="tree" width="{width}" '
        f'height="{svg_height}" viewBox="0 0 {width} {svg_height}" role="img" '
        f'aria-label="{html.escape(label, quote=True)}" data-words="{len(leaves)}">',
        '<g class="edges" stroke="#888" stroke-width="1">',
    ]
    for node, kids in enumerate(tree.children):
        for kid in kids:
            parts.append(
                f'<line x1="{x[node]:.1f}" y1="{y(node):.1f}" x2="{x[kid]:.1f}" y2="{y(kid):.1f}"/>'
            )
    parts.append("</g>")
    parts.append(f'<g class="nodes" font-family="sans-serif" font-size="{FONT_SIZE}">')
    for node, kids in enumerate(tree.children):
        if kids:
            parts.append(
                f'<circle class="inner" cx="{x[node]:.1f}" cy="{y(node):.1f}" '
                f'r="{NODE_RADIUS}" fill="#357"/>'
            )
        else:
            parts.append(
                f'<text class="leaf" x="{x[node]:.1f}" y="{y(node) + FONT_SIZE:.1f}" '
                f'text-anchor="middle">{html.escape(tree.words[node])}</text>'
            )
    parts.append("</g></svg>")
    return "".join(parts)


def describe_source(source: Optional[str]) -> str:
    """A caption for a `*_transitions_source` value (unknown values are shown as they are)."""
    if source is None:
        return "no tree source reported"
    return SOURCE_DESCRIPTIONS.get(source, f"tree source: {source}")


def _tree_figure(side: str, prediction: Dict[str, Any]) -> str:
    tree_text = prediction.get(f"{side}_tree")
    source = prediction.get(f"{side}_transitions_source")
    caption = (
        f"<figcaption><b>{side.capitalize()}</b> — made by "
        f'<span class="source">{html.escape(describe_source(source))}</span>'
        f"{f' (<code>{html.escape(source)}</code>)' if isinstance(source, str) else ''}"
        "</figcaption>"
    )
    if not isinstance(tree_text, str):
        body = '<p class="no-tree">this model reports no tree</p>'
    else:
        try:
            body = tree_svg(tree_text, label=f"{side} tree")
        except TreeFormatError as error:
            body = (
                f'<p class="error">cannot draw this tree ({html.escape(str(error))}):</p>'
                f"<pre>{html.escape(tree_text)}</pre>"
            )
    return (
        f'<figure class="tree-figure" id="{side}-tree">{caption}'
        f'<div class="scroll">{body}</div></figure>'
    )


def _probabilities(prediction: Dict[str, Any]) -> str:
    probs = prediction.get("label_probs")
    if not isinstance(probs, dict):
        return ""
    best = prediction.get("label")
    rows = []
    for name, value in sorted(probs.items(), key=lambda item: -float(item[1])):
        value = float(value)
        mark = ' class="best"' if name == best else ""
        rows.append(
            f"<tr{mark}><th>{html.escape(str(name))}</th>"
            f'<td class="prob">{value:.3f}</td>'
            f'<td><span class="bar" style="width:{max(0.0, min(1.0, value)) * 200:.0f}px">'
            "</span></td></tr>"
        )
    return f'<table class="probs">{"".join(rows)}</table>'


def prediction_html(
    prediction: Any, title: str = "", sides: Sequence[str] = ("premise", "hypothesis")
) -> str:
    """One prediction of the `spinn_nli` predictor as an HTML `<section class="prediction">`:
    the label probabilities and both trees with their sources; an output with `"error"` (or
    anything that is not a JSON object) as an error message. `sides`: whose trees to draw
    (`<side>_tree`, `<side>_transitions_source`), e.g. `("sentence",)` for a single-sentence
    classifier."""
    heading = f"<h2>{html.escape(title)}</h2>" if title else ""
    if not isinstance(prediction, dict):
        message = f"not a prediction: {json.dumps(prediction)[:300]}"
        return (
            f'<section class="prediction">{heading}'
            f'<p class="error">{html.escape(message)}</p></section>'
        )
    if "error" in prediction:
        shown = prediction.get("input")
        detail = ""
        if shown is not None:
            shown_text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
            detail = f"<pre class='input'>{html.escape(shown_text[:2000])}</pre>"
        return (
            f'<section class="prediction">{heading}<p class="error">Error: '
            f"{html.escape(str(prediction['error']))}</p>{detail}</section>"
        )
    sentences = []
    for side in sides:
        words = prediction.get(f"{side}_tree")
        if isinstance(words, str):
            plain = " ".join(s for s in words.split() if s not in ("(", ")"))
            sentences.append(f"<p><b>{side.capitalize()}:</b> {html.escape(plain)}</p>")
    label = prediction.get("label")
    label_html = f'<p class="label">Label: <b>{html.escape(str(label))}</b></p>' if label else ""
    return (
        f'<section class="prediction">{heading}{"".join(sentences)}{label_html}'
        f"{_probabilities(prediction)}"
        f"{''.join(_tree_figure(side, prediction) for side in sides)}</section>"
    )


STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
textarea { width: 100%; font-size: 1em; }
.error { color: #a00; font-weight: bold; }
table.probs td, table.probs th { padding: 2px 8px; text-align: left; }
table.probs tr.best th { text-decoration: underline; }
.bar { display: inline-block; height: 12px; background: #357; }
figure.tree-figure { margin: 1em 0; border: 1px solid #ddd; padding: 0.5em; }
.scroll { overflow-x: auto; }
section.prediction { border-bottom: 2px solid #ccc; padding-bottom: 1em; }
"""


def page(title: str, body: str) -> str:
    """A whole HTML page around `body` (which must already be escaped HTML)."""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>\n"
    )


def predictions_page(predictions: Sequence[Any], title: str = "SPINN predictions") -> str:
    """A static page of many predictions (e.g. a `allennlp predict` JSONL file), numbered."""
    sections = [
        prediction_html(prediction, title=f"#{number}")
        for number, prediction in enumerate(predictions, start=1)
    ]
    return page(title, "".join(sections) or "<p>No predictions.</p>")
