// NSHRDLU Model 2 on SNLI: the full SPINN trained on its own predicted transitions, reached by
// a schedule from teacher forcing (the plan's suggested interpolation, as scheduled sampling):
// teacher forcing for the first ~epoch (170 batches of the 1 % subset), then the chance of
// following its own prediction at each step rises linearly to 1 over ~3 epochs. The transition
// loss (alpha 3.9) keeps the parser supervised. Otherwise the SPINN config (Table 2, "SP.").
local spinn = import "spinn.jsonnet";
spinn + {
  trainer+: {
    callbacks: super.callbacks + [
      { type: "self_transition_schedule", start: 0.0, end: 1.0, hold_batches: 170, ramp_batches: 510 },
    ],
  },
}
