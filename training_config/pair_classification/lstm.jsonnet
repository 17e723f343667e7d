// The paper's LSTM RNN baseline (Table 2, column "RNN"): the same NLI model with AllenNLP's
// own LSTM as the sentence encoder (last hidden state).
local common = import "nli_common.libsonnet";
{
  dataset_reader: common.dataset_reader,
  train_data_path: common.train_data_path,
  validation_data_path: common.validation_data_path,
  datasets_for_vocab_creation: common.datasets_for_vocab_creation,
  model: {
    type: "spinn_nli",
    text_field_embedder: common.text_field_embedder,
    encoder: { type: "lstm", input_size: common.embedding_dim, hidden_size: common.hidden_dim },
    mlp_layers: 2,
    dropout: 0.06,  // keep 94%
    initializer: common.initializer,
    regularizer: common.regularizer(4e-6),
  },
  data_loader: common.data_loader,
  validation_data_loader: common.validation_data_loader,
  trainer: common.trainer(5e-3),
}
