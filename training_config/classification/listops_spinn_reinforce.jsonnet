// ListOps, a parser trained by the task alone (latent trees): the full SPINN's parser samples
// each tree from its distribution over legal moves while the model trains, and REINFORCE with
// a self-critical baseline (the greedy tree's loss) and an entropy bonus pushes it towards the
// trees that answer better (modules/policy_gradient.py). No transition loss: the gold trees the
// reader gives only score the induced trees (bracket F1). The tracker (the parser's state) gets
// a 10x smaller learning rate, as Havrylov et al. (2019) give their parser. Greedy parse at
// evaluation.
local spinn = import "listops_spinn.jsonnet";
spinn + {
  model+: {
    transition_loss_weight: 0.0,
    policy_gradient: { entropy_weight: 1e-4 },
  },
  trainer+: {
    optimizer+: { parameter_groups: [[["_encoder\\.spinn\\.tracker\\."], { lr: 1e-4 }]] },
  },
}
