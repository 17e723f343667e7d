// ListOps, the soft stack made to choose: NSHRDLU Model 4 (the soft stack's strengths are the
// parser's probabilities, no parse supervision) with the strengths annealed towards 0 and 1 —
// the parser's softmax temperature falls from 1 to 0.05 over the first ~20 epochs
// (parser_temperature_schedule) and the strengths' entropy is penalised — and the discrete
// stack following the parser's greedy choices at evaluation (soft_at_test_time: false), so the
// tree it is scored with is the tree it answers with.
local model4 = import "listops_spinn_model4.jsonnet";
model4 + {
  model+: {
    encoder+: { evaluation_policy: { type: "greedy" }, strength_entropy_weight: 0.01 },
  },
  trainer+: {
    callbacks: [
      { type: "parser_temperature_schedule", start: 1.0, end: 0.05, ramp_batches: 12000 },
    ] + super.callbacks,
  },
}
