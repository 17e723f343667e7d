// ListOps, a latent parser trained by REINFORCE and then PPO's clipped updates on the same trees
// (Havrylov et al. 2019's recipe, on SPINN's shift-reduce parser): after the trainer's step on
// a batch, the parser alone takes updates_per_batch - 1 more steps on that batch's sampled trees
// (the parser_updates callback; modules/policy_gradient.py). The parser is a network of its own
// (composition_reads_tracker: false), so its extra steps leave the composition as the task's
// loss trained it, and it has a 10x smaller learning rate. Each extra step is one more encoder
// pass over the batch: 4 updates cost about 2.2x a REINFORCE batch here
// (Havrylov et al. take about 15, with a parser much cheaper than the composition).
local reinforce = import "listops_spinn_reinforce.jsonnet";
reinforce + {
  model+: {
    encoder+: { tracker+: { composition_reads_tracker: false } },
    policy_gradient+: { updates_per_batch: 4, clip: 0.2 },
  },
  trainer+: {
    callbacks+: [{ type: "parser_updates" }],
  },
}
