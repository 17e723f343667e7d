// ListOps, a parser of its own trained by the task alone through a beam of its trees: the
// own-parser best-draw config (disjoint syntax and semantics: the composition is SPINN-PI-NT,
// the parser a network of its own; modules/own_parser.py) with beam training instead of drawn
// trees. The parser keeps its `width` most probable partial parses per line, cut by summed
// log-probability at each step; the composition follows each of the beam's trees, level by
// level, and the sentence vector is the softmax over the parser's scores times their roots
// (core.policies.BeamMixture), so the label's gradient reaches the parser through the scores.
// Greedy trees at evaluation.
local best_draw = import "listops_own_parser_best_draw.jsonnet";
best_draw + {
  model+: {
    policy_gradient:: null,
    encoder+: { training_policy: { type: "beam_mixture", width: 5 } },
  },
}
