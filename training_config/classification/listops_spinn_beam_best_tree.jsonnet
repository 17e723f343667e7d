// ListOps, beam training as the pilots chose it (results/listops/README.md, "Beam training: the
// pilots"): the beam config's 5 parses per line, with the three changes that took it from the
// 54-60 % plateau to best-draw's level. The beam's selection sees Gumbel-perturbed scores (so it
// keeps exploring trees the parser does not yet favour), the parser learns at the model's rate
// (1e-3, not 10x smaller), and `mix: "best_tree"`: the classifier still learns from the mixture of
// the 5 roots, while the parser is pushed towards the one parse whose root gives the label the
// highest probability (hard EM on the beam) instead of through the mixture's weights alone.
local beam = import "listops_spinn_beam.jsonnet";
beam + {
  model+: {
    encoder+: {
      training_policy+: { gumbel_scale: 1.0, mix: "best_tree" },
    },
  },
  trainer+: {
    optimizer+: { parameter_groups: [[["_encoder\\.spinn\\.tracker\\."], { lr: 1e-3 }]] },
  },
}
