// ListOps, LSTM baseline (Nangia and Bowman 2018: 71.5): an LSTM's last hidden state.
// "padded_lstm" is AllenNLP's "lstm" (the same parameters and outputs) run over the padded
// batch, which trains several times faster on a CPU; "lstm" gives the same model.
local common = import "listops_common.libsonnet";
{
  dataset_reader: common.dataset_reader(gold_trees=false),
  validation_dataset_reader: common.validation_dataset_reader(gold_trees=false),
  train_data_path: common.train_data_path,
  validation_data_path: common.validation_data_path,
  test_data_path: common.test_data_path,
  evaluate_on_test: common.evaluate_on_test,
  model: common.model({
    type: "padded_lstm", input_size: common.embedding_dim, hidden_size: common.hidden_dim,
  }),
  data_loader: common.data_loader,
  validation_data_loader: common.validation_data_loader,
  trainer: common.trainer(),
}
