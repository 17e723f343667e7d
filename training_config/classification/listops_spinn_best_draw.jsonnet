// ListOps, a parser trained by the task alone that ranks its trees: the REINFORCE warm-up
// config (the parser frozen for its first 2,000 batches, a network of its own that does not
// train the nodes it reads), with 4 trees drawn per line and the best-draw baseline: each
// line's best tree of the 4 is pushed up and the other three down by the same total, whatever
// the margins (modules/policy_gradient.py, spinn_core.policy_gradient_losses.draw_advantages).
// The first of our latent parsers to leave the trivial trees: results/listops/README.md, "Why
// they collapse".
local warmup = import "listops_spinn_reinforce_warmup.jsonnet";
warmup + {
  model+: {
    policy_gradient+: { draws: 4, baseline: "best_draw" },
  },
}
