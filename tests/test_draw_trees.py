"""scripts/draw_trees.py: several models' trees of the same sentences in one SVG picture."""

import json
import xml.etree.ElementTree as ET

from spinn_allennlp.testing import load_script


def test_a_row_per_sentence_a_tree_per_model_captioned_with_f1(tmp_path):
    gold = ["( ( ( ( [MAX 2 ) 9 ) 4 ) ] )", "( ( a b ) c )"]
    right = ["( [MAX ( 2 ( 9 ( 4 ] ) ) ) )", "( a ( b c ) )"]
    for name, trees in (("gold", gold), ("right", right)):
        lines = [json.dumps({"tree": tree, "label": "9"}) for tree in trees]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    script = load_script("scripts/draw_trees.py")
    models = {
        name: script.read_trees(tmp_path / f"{name}.jsonl", "tree", [1, 2])
        for name in ("gold", "right")
    }
    svg = script.picture(models)
    root = ET.fromstring(svg)  # well-formed
    namespace = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{namespace}svg")) == 4  # 2 sentences x 2 models
    captions = [text.text for text in root.findall(f"{namespace}text")]
    # The right-branching trees share no bracket with the gold trees but the whole sentence.
    assert captions == ["gold", "right (F1 0 against gold)", "gold", "right (F1 0 against gold)"]
    leaves = [t.text for t in root.iter(f"{namespace}text") if t.get("class") == "leaf"]
    assert leaves[:6] == ["[MAX", "2", "9", "4", "]", "[MAX"]
