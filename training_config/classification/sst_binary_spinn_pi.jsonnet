// SST binary (2-class): SPINN-PI (tracking LSTM).
local sst = import "sst_common.libsonnet";
sst.sst("2-class", "spinn_pi")
