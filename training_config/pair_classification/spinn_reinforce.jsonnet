// SNLI, a parser trained by the task alone (latent trees): the full SPINN's parser samples each
// sentence's tree while the model trains, and REINFORCE with a self-critical baseline (the
// greedy trees' loss) and an entropy bonus pushes it towards trees that classify the pair
// better (modules/policy_gradient.py); no transition loss, so the Stanford parses the reader
// gives only score the induced trees (bracket F1). The tracker (the parser's state) gets a 10x
// smaller learning rate. Greedy parse at evaluation.
local spinn = import "spinn.jsonnet";
spinn + {
  model+: {
    transition_loss_weight: 0.0,
    policy_gradient: { entropy_weight: 1e-4 },
  },
  trainer+: {
    optimizer+: { parameter_groups: [[["_encoder\\.spinn\\.tracker\\."], { lr: 2e-4 }]] },
  },
}
