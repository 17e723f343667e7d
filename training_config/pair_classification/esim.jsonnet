// ESIM (Chen et al. 2017): BiLSTM input encoding, soft alignment, enhancement, BiLSTM
// inference composition, average + max pooling, MLP. 88.0 on SNLI test in the paper.
local esim = import "esim_common.libsonnet";
esim.data {
  model: esim.esim_model,
  trainer: esim.trainer,
}
