// SNLI, the ListOps best-draw parser (classification/listops_spinn_best_draw.jsonnet) on pairs:
// a latent parser trained by REINFORCE that draws 4 trees per sentence and pushes each
// sentence's best draw up and the other three down (baseline "best_draw"), as a network of its
// own (composition_reads_tracker: false) whose losses do not reach the nodes it reads
// (parser_trains_nodes: false), frozen for its first 500 batches (about three epochs of the
// 1 % subset) while the rest of the model learns on its near-uniform trees. Greedy parse at
// evaluation. What each piece does: docs/latent_trees.md.
local reinforce = import "spinn_reinforce.jsonnet";
reinforce + {
  model+: {
    encoder+: { tracker+: { composition_reads_tracker: false, parser_trains_nodes: false } },
    policy_gradient+: { draws: 4, baseline: "best_draw" },
  },
  trainer+: {
    callbacks+: [{ type: "parser_warmup", batches: 500 }],
  },
}
