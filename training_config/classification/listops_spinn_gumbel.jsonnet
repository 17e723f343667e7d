// ListOps, straight-through Gumbel-softmax over SHIFT/REDUCE (Choi et al. 2018's estimator
// applied to shift-reduce; no parse supervision): in training each step's move is drawn from
// the parser's softmax and followed exactly (the soft stack with strengths of 0 or 1), and the
// label's loss reaches the parser through the Gumbel softmax at a temperature that falls from
// 1 to 0.5 over the first ~20 epochs (parser_temperature_schedule). Evaluation runs the
// discrete stack on the parser's greedy moves. The reader's gold trees only score the trees.
local model4 = import "listops_spinn_model4.jsonnet";
model4 + {
  model+: {
    encoder+: {
      training_policy: { type: "straight_through_gumbel" },
      evaluation_policy: { type: "greedy" },
    },
  },
  trainer+: {
    callbacks: [
      { type: "parser_temperature_schedule", start: 1.0, end: 0.5, ramp_batches: 12000 },
    ] + super.callbacks,
  },
}
