// ListOps, the beam recipe (listops_spinn_beam_best_tree: K = 5, Gumbel-perturbed selection,
// the parser at the model's learning rate, the best tree as the parser's target) with the gated
// recursive cell of Ordered Memory and BT-Cell instead of the TreeLSTM (`composition: "grc"`).
// Why (results/listops, "Why a label-trained parser stops near 94-95 %"): trained from scratch on
// best-draw's own trees, the TreeLSTM reaches 91.0 % and the GRC 99.5 %: the parser's trees
// suffice, the TreeLSTM does not generalise on them. The pilots' round 8 is this recipe at the
// pilots' size.
local beam = import "listops_spinn_beam_best_tree.jsonnet";
beam + {
  model+: { encoder+: { composition: "grc" } },
}
