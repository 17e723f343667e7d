// SNLI, straight-through Gumbel-softmax over SHIFT/REDUCE (no parse supervision): Model 4's
// soft stack with strengths of exactly 0 or 1, each move drawn from the parser's softmax by the
// Gumbel-max trick while the model trains, the label's loss reaching the parser through the
// Gumbel softmax at a temperature falling from 1 to 0.5 over the first ~10 epochs of SNLI 1 %
// (171 batches of 32 pairs each). Evaluation runs the discrete stack on the parser's greedy
// moves; the Stanford parses the reader gives only score the induced trees (bracket F1).
local model4 = import "spinn_model4.jsonnet";
model4 + {
  model+: {
    encoder+: {
      training_policy: { type: "straight_through_gumbel" },
      evaluation_policy: { type: "greedy" },
    },
  },
  trainer+: {
    callbacks: [
      { type: "parser_temperature_schedule", start: 1.0, end: 0.5, ramp_batches: 1700 },
    ] + super.callbacks,
  },
}
