// Full SPINN (Table 2, column "SP."): tracking LSTM 79, integrated parser trained with α = 3.9,
// its own parse at test time. Dropout values are drop rates = 1 - the paper's keep rates.
local common = import "nli_common.libsonnet";
{
  dataset_reader: common.dataset_reader,
  train_data_path: common.train_data_path,
  validation_data_path: common.validation_data_path,
  datasets_for_vocab_creation: common.datasets_for_vocab_creation,
  model: {
    type: "spinn_nli",
    text_field_embedder: common.text_field_embedder,
    encoder: {
      type: "spinn",
      input_dim: common.embedding_dim,
      hidden_dim: common.hidden_dim,
      tracker: { tracking_dim: 79, predict_transitions: true },
      projection: { dropout: 0.14, batch_norm: true },  // keep 86%
    },
    mlp_layers: 1,
    dropout: 0.06,  // keep 94%
    transition_loss_weight: 3.9,
    initializer: common.initializer,
    regularizer: common.regularizer(3e-5),
  },
  data_loader: common.data_loader,
  validation_data_loader: common.validation_data_loader,
  trainer: common.trainer(2e-3),
}
