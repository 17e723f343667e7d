// SNLI, a latent parser trained by REINFORCE and then PPO's clipped updates on the same trees
// (see classification/listops_spinn_ppo.jsonnet): the parser alone takes updates_per_batch - 1
// more steps on each batch's sampled trees (the parser_updates callback), as a network of its
// own (composition_reads_tracker: false). The dropout of the projection is drawn anew in each
// pass, so the probability ratios of the extra steps carry its noise as well as the parser's
// change.
local reinforce = import "spinn_reinforce.jsonnet";
reinforce + {
  model+: {
    encoder+: { tracker+: { composition_reads_tracker: false } },
    policy_gradient+: { updates_per_batch: 4, clip: 0.2 },
  },
  trainer+: {
    callbacks+: [{ type: "parser_updates" }],
  },
}
