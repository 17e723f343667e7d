// SPINN-PI (Table 2, column "SP-PI"): parsed input, tracking LSTM 61 feeding the composition.
local common = import "nli_common.libsonnet";
{
  dataset_reader: common.reader_with_benepar,
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
      tracker: { tracking_dim: 61 },
      projection: { dropout: 0.08, batch_norm: true },  // keep 92%
    },
    mlp_layers: 2,
    dropout: 0.07,  // keep 93%
    initializer: common.initializer,
    regularizer: common.regularizer(2e-5),
  },
  data_loader: common.data_loader,
  validation_data_loader: common.validation_data_loader,
  trainer: common.trainer(7e-3),
}
