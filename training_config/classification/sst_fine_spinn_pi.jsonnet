// SST fine (5-class): SPINN-PI (tracking LSTM).
local sst = import "sst_common.libsonnet";
sst.sst("5-class", "spinn_pi")
