// SNLI, a parser of its own trained by the task alone with Havrylov et al. (2019)'s estimator:
// the parser and composition of own_parser_best_draw.jsonnet, trained as
// classification/listops_own_parser_ppo.jsonnet says (one sampled tree per sentence, the
// greedy trees' loss as baseline, a running advantage scale, the normalised entropy bonus, 15
// parser updates a batch with PPO's clipped surrogate, Adadelta with the parser at a tenth of
// the composition's learning rate, L2 1e-4 as weight decay, the parser's and the rest's
// gradients each clipped to a largest absolute value of 0.5).
local best_draw = import "own_parser_best_draw.jsonnet";
best_draw + {
  model+: {
    regularizer: null,
    policy_gradient: {
      baseline: "greedy",
      running_std: 0.9,
      normalized_entropy: true,
      entropy_weight: 1e-4,
      updates_per_batch: 15,
      clip: 0.2,
    },
  },
  trainer+: {
    optimizer: {
      type: "adadelta",
      lr: 1.0,
      weight_decay: 1e-4,
      parameter_groups: [[["_encoder\\.parser\\."], { lr: 0.1 }]],
    },
    learning_rate_scheduler: null,
    grad_norm: false,
    callbacks: [
      { type: "restore_random_state" },
      { type: "module_gradient_clipping", groups: [["_encoder\\.parser\\."]], max_norm: 0.5 },
      { type: "parser_updates" },
    ],
  },
}
