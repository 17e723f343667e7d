// ListOps, full SPINN (NSHRDLU Model 1): tracking LSTM and a parser trained on the gold trees
// (teacher forcing, transition loss weight alpha), its own parse at evaluation.
local common = import "listops_common.libsonnet";
{
  dataset_reader: common.dataset_reader(),
  validation_dataset_reader: common.validation_dataset_reader(),
  train_data_path: common.train_data_path,
  validation_data_path: common.validation_data_path,
  test_data_path: common.test_data_path,
  evaluate_on_test: common.evaluate_on_test,
  model: common.model({
    type: "spinn",
    input_dim: common.embedding_dim,
    hidden_dim: common.hidden_dim,
    tracker: { tracking_dim: common.tracking_dim, predict_transitions: true },
  }, transition_loss_weight=1.0),
  data_loader: common.data_loader,
  validation_data_loader: common.validation_data_loader,
  trainer: common.trainer(),
}
