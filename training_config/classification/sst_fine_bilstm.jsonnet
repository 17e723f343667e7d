// SST fine (5-class): AllenNLP's bidirectional LSTM, root label only.
local sst = import "sst_common.libsonnet";
sst.sst("5-class", "bilstm")
