// ListOps, a parser trained by the task alone through a beam of its trees (beam training): each
// line keeps the parser's `width` most probable partial parses, every one expanded by its legal
// moves and cut back to the best `width` by summed log-probability at each step, and the
// sentence vector is the softmax over those scores times the parses' roots, so the label's
// gradient reaches the parser through the scores: no sampling, no baseline (core.policies.
// BeamMixture; the easy-first Beam Tree Cell's estimator in shift-reduce form). Everything else
// is the best-draw config's: a parser that parses only (composition_reads_tracker: false) and
// does not train the nodes it reads, its learning rate 10x smaller, frozen for its first 2,000
// batches. Greedy parse at evaluation (an evaluation_policy can choose a beam search).
local spinn = import "listops_spinn.jsonnet";
spinn + {
  model+: {
    transition_loss_weight: 0.0,
    encoder+: {
      tracker+: { composition_reads_tracker: false, parser_trains_nodes: false },
      training_policy: { type: "beam_mixture", width: 5 },
    },
  },
  trainer+: {
    optimizer+: { parameter_groups: [[["_encoder\\.spinn\\.tracker\\."], { lr: 1e-4 }]] },
    callbacks+: [{ type: "parser_warmup", batches: 2000 }],
  },
}
