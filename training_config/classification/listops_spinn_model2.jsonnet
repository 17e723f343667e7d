// ListOps, NSHRDLU Model 2: the full SPINN trained on its own predicted transitions, reached by
// the interpolation the NSHRDLU plan suggests (scheduled sampling): teacher forcing for the
// first 300 batches, then the chance of following its own prediction at each step rises
// linearly to 1 over 1,500 batches. The transition loss keeps the parser supervised.
// To start from a trained Model 1 instead, see spinn_model2_from_model1.jsonnet.
local spinn = import "listops_spinn.jsonnet";
spinn + {
  trainer+: {
    callbacks: [
      { type: "self_transition_schedule", start: 0.0, end: 1.0, hold_batches: 300, ramp_batches: 1500 },
    ] + super.callbacks,
  },
}
