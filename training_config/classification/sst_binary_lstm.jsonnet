// SST binary (2-class): AllenNLP's LSTM, root label only.
local sst = import "sst_common.libsonnet";
sst.sst("2-class", "lstm")
