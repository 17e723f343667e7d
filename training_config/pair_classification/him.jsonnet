// HIM (Chen et al. 2017, 88.6 on SNLI test in the paper): ESIM and the syntactic tree-LSTM model
// with their label probabilities averaged. Trained here as one model (the sum of the two losses,
// each member trained as alone); scripts/make_him_archive.py instead combines two models trained
// apart, as the paper did.
local esim = import "esim_common.libsonnet";
esim.data {
  dataset_reader: esim.tree_dataset_reader,
  model: {
    type: "him_nli",
    members: { esim: esim.esim_model, tree: esim.tree_model },
  },
  trainer: esim.trainer,
}
