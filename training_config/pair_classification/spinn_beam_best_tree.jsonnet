// SNLI, beam training as the ListOps pilots chose it (the SNLI twin of
// classification/listops_spinn_beam_best_tree.jsonnet): the best-draw config's parser (a network
// of its own that does not train the nodes it reads, frozen for its first 500 batches) trained
// through a beam of 5 parses per sentence instead of drawn trees. The beam's selection sees
// Gumbel-perturbed scores; the parser learns at the model's rate; `mix: "best_tree"`: each of
// the 5 x 5 pairs of a premise's and a hypothesis's tree is classified alone and the predictions
// mixed by the pairs' weights (the classifier's loss), and the pair under which the label is
// likeliest is the parser's target for both sentences (hard EM on the beam; spinn_nli's
// mixed_pair_predictions). Greedy trees at evaluation; the Stanford parses only score them.
local best_draw = import "spinn_best_draw.jsonnet";
best_draw + {
  model+: {
    policy_gradient:: null,
    encoder+: {
      training_policy: { type: "beam_mixture", width: 5, gumbel_scale: 1.0, mix: "best_tree" },
    },
  },
  trainer+: {
    // The model's own rate (nli_common's trainer(2e-3) in spinn.jsonnet), not 10x smaller.
    optimizer+: { parameter_groups: [[["_encoder\\.spinn\\.tracker\\."], { lr: 2e-3 }]] },
  },
}
