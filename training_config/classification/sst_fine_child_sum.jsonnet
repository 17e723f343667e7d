// SST fine (5-class): Child-Sum Tree-LSTM on head-rule dependency trees.
local sst = import "sst_common.libsonnet";
sst.sst("5-class", "child_sum")
