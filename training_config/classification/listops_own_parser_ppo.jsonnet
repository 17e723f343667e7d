// ListOps, a parser of its own trained by the task alone with Havrylov et al. (2019)'s
// estimator (their ListOps recipe, 99.2 %, as read from their code), on the parser of
// listops_own_parser_best_draw.jsonnet (its own network; the composition, SPINN-PI-NT, level by
// level over its trees):
// - one tree sampled per line; its reward the line's cross-entropy, its baseline the greedy
//   tree's (self-critical); advantages divided by a running standard deviation (decay 0.9, at
//   least 1); an entropy bonus of 1e-4 on the normalised entropy;
// - after the trainer's step, 14 more parser updates on the same trees with PPO's clipped
//   surrogate (clip 0.2): 15 parser updates per batch, the composition one (parser_updates);
// - Adadelta, learning rate 1 for the composition and 0.1 for the parser (a parameter group),
//   L2 1e-4 (weight decay), batch 64; no warm-up.
// - their gradient clipping: the parser's and the composition's gradients each rescaled to a
//   largest absolute value of 0.5 (module_gradient_clipping, PPO's further updates included),
//   instead of the other ListOps configs' norm of 1 over the whole model.
// Results: results/listops/about.md.
local best_draw = import "listops_own_parser_best_draw.jsonnet";
best_draw + {
  model+: {
    policy_gradient: {
      baseline: "greedy",
      running_std: 0.9,
      normalized_entropy: true,
      entropy_weight: 1e-4,
      updates_per_batch: 15,
      clip: 0.2,
    },
  },
  data_loader+: { batch_sampler+: { batch_size: 64 } },
  trainer+: {
    optimizer: {
      type: "adadelta",
      lr: 1.0,
      weight_decay: 1e-4,
      parameter_groups: [[["_encoder\\.parser\\."], { lr: 0.1 }]],
    },
    grad_norm: false,
    callbacks: [
      { type: "restore_random_state" },
      { type: "module_gradient_clipping", groups: [["_encoder\\.parser\\."]], max_norm: 0.5 },
      { type: "parser_updates" },
    ],
  },
}
