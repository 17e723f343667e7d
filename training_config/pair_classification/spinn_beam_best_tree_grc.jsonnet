// SNLI, the beam recipe (spinn_beam_best_tree: 5 parses a sentence, Gumbel-perturbed selection,
// the parser at the model's rate, the best pair of trees as the parser's target) with the gated
// recursive cell of Ordered Memory and BT-Cell instead of the TreeLSTM (`composition: "grc"`):
// the SNLI twin of classification/listops_spinn_beam_best_tree_grc.jsonnet, which ListOps chose
// because the GRC, not the TreeLSTM, generalises on the parser's own trees
// (results/listops/about.md, "Why a label-trained parser stops near 94-95 %").
local beam = import "spinn_beam_best_tree.jsonnet";
beam + {
  model+: { encoder+: { composition: "grc" } },
}
