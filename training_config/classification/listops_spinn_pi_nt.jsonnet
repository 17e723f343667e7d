// ListOps, SPINN-PI-NT (NSHRDLU Model 0) on the gold trees: exactly a TreeLSTM (Nangia and
// Bowman 2018: TreeLSTM 98.7).
local common = import "listops_common.libsonnet";
{
  dataset_reader: common.dataset_reader(),
  validation_dataset_reader: common.validation_dataset_reader(),
  train_data_path: common.train_data_path,
  validation_data_path: common.validation_data_path,
  test_data_path: common.test_data_path,
  evaluate_on_test: common.evaluate_on_test,
  model: common.model({
    type: "spinn", input_dim: common.embedding_dim, hidden_dim: common.hidden_dim,
  }),
  data_loader: common.data_loader,
  validation_data_loader: common.validation_data_loader,
  trainer: common.trainer(),
}
