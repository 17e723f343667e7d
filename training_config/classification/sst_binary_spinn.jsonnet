// SST binary (2-class): full SPINN (tracking LSTM + parser trained on SST's trees, own parse at test time).
local sst = import "sst_common.libsonnet";
sst.sst("2-class", "spinn")
