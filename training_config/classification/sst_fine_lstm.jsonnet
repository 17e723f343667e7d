// SST fine (5-class): AllenNLP's LSTM, root label only.
local sst = import "sst_common.libsonnet";
sst.sst("5-class", "lstm")
