// The syntactic tree-LSTM inference model of Chen et al. (2017) ("syn.tree", 87.8 on SNLI test
// in the paper): ESIM with tree-LSTMs over the SNLI binary parses in both the input encoding and
// the inference composition, attention over all premise x hypothesis nodes.
local esim = import "esim_common.libsonnet";
esim.data {
  dataset_reader: esim.tree_dataset_reader,
  model: esim.tree_model,
  trainer: esim.trainer,
}
