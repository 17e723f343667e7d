// NSHRDLU Model 4 on SNLI: Model 3 without parse supervision (alpha 0): the parser learns only
// from the label's loss, through the soft stack. The gold parses are read only to score the
// trees it prefers (bracket F1).
local model3 = import "spinn_model3.jsonnet";
model3 + {
  model+: { transition_loss_weight: 0.0 },
}
