// NSHRDLU Model 3 on SNLI: the full SPINN on a soft stack and buffer whose strengths are its
// parser's probabilities (spinn_core/runners/soft_stack.py), trained on the label and on the
// gold transitions (alpha 3.9). Otherwise the SPINN config (Table 2, "SP.").
local spinn = import "spinn.jsonnet";
spinn + {
  model+: {
    encoder+: { training_policy: { type: "soft" }, evaluation_policy: { type: "soft" } },
  },
}
