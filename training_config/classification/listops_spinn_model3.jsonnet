// ListOps, NSHRDLU Model 3: the full SPINN on a soft stack and soft buffer whose strengths are
// its parser's probabilities (core/soft_stack.py), so the label's loss reaches the parser;
// the parser is also trained on the gold transitions (one-hot targets, weight alpha).
local spinn = import "listops_spinn.jsonnet";
spinn + {
  model+: {
    encoder+: { training_policy: { type: "soft" }, evaluation_policy: { type: "soft" } },
  },
}
