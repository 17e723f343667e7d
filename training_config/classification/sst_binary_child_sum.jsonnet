// SST binary (2-class): Child-Sum Tree-LSTM on head-rule dependency trees.
local sst = import "sst_common.libsonnet";
sst.sst("2-class", "child_sum")
