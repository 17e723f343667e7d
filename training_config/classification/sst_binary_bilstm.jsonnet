// SST binary (2-class): AllenNLP's bidirectional LSTM, root label only.
local sst = import "sst_common.libsonnet";
sst.sst("2-class", "bilstm")
