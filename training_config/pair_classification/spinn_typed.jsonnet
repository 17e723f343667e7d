// Full SPINN with typed REDUCE (NSHRDLU §3.3): the SPINN config, each REDUCE of the binary
// parse typed by the labeled parse SNLI ships (NP, VP, S, PP, SBAR, ADJP, ADVP, OTHER; see
// spinn_allennlp/data/labeled_trees.py); a 16-d type embedding joins the composition's input
// and the parser predicts the type (its cross-entropy weighted by alpha like the transitions').
local spinn = import "spinn.jsonnet";
spinn + {
  dataset_reader+: { reduce_types: true },
  model+: { encoder+: { tracker+: { reduce_types: 8, type_dim: 16 } } },
}
