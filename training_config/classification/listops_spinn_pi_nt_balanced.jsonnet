// ListOps, SPINN-PI-NT on balanced binary trees (no gold trees anywhere): what a tree of the
// wrong shape costs.
local common = import "listops_common.libsonnet";
{
  dataset_reader: common.dataset_reader(gold_trees=false),
  validation_dataset_reader: common.validation_dataset_reader(gold_trees=false),
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
