// SST binary (2-class): SPINN-PI-NT (= the paper's binary constituency Tree-LSTM).
local sst = import "sst_common.libsonnet";
sst.sst("2-class", "spinn_pi_nt")
