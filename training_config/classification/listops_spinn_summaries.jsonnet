// ListOps, full SPINN (Model 1) whose tracker also reads LSTM summaries of the whole stack and
// buffer (NSHRDLU §3.1), 32-d each.
local spinn = import "listops_spinn.jsonnet";
spinn + {
  model+: { encoder+: { tracker+: { summary_dim: 32 } } },
}
