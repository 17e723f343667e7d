// SICK relatedness: SPINN-PI-NT (the paper's constituency Tree-LSTM) over the tree source's trees.
local sick = import "sick_common.libsonnet";
sick.sick("spinn_pi_nt")
