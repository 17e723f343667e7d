"""Trees you can look at: a one-page web demo (`python -m spinn_allennlp.demo model.tar.gz`,
or `spinn-demo`) and static pages of predictions files (`python -m spinn_allennlp.demo.static`).

The renderer (`spinn_allennlp.demo.render`) and the static pages need the standard library
alone; the server (`spinn_allennlp.demo.server`) loads an archive and so needs AllenNLP.
"""

from spinn_allennlp.demo.render import parse_tree, prediction_html, predictions_page, tree_svg

__all__ = ["parse_tree", "prediction_html", "predictions_page", "tree_svg"]
