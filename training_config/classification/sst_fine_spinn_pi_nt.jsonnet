// SST fine (5-class): SPINN-PI-NT (= the paper's binary constituency Tree-LSTM).
local sst = import "sst_common.libsonnet";
sst.sst("5-class", "spinn_pi_nt")
