// ListOps, NSHRDLU Model 4: the soft-stack SPINN of Model 3 with no parse supervision: the
// parser learns only from the label's loss (latent trees). The reader still gives the gold
// trees, only to score the trees the model prefers (bracket F1), never to train on them.
local spinn3 = import "listops_spinn_model3.jsonnet";
spinn3 + {
  model+: { transition_loss_weight: 0.0 },
}
