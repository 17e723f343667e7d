// Your own labelled sentences with real trees (docs/your_own_model.md): JSON lines
//   {"text": "A lovely film .", "label": "pos", "binary_parse": "( ( A ( lovely film ) ) . )"}
// with the parse optional, read by `text_classification_transitions` and classified by
// `spinn_classifier` with the full SPINN:
//   TEXT_TRAIN=train.jsonl TEXT_DEV=dev.jsonl allennlp train \
//     training_config/classification/text_spinn.jsonnet -s out/text_spinn --include-package spinn_allennlp
// The parser learns from the lines that have a parse (the paper's transition loss, alpha 3.9)
// and parses the other sentences itself, in training and at evaluation. To give sentences
// without a parse a parser's trees instead: "dataset_reader.tree_source": {"type": "benepar"}.
local embedding_dim = 300;
{
  dataset_reader: { type: "text_classification_transitions" },
  // "${VAR}" paths are expanded by the reader; there is no default: set both variables.
  train_data_path: "${TEXT_TRAIN}",
  validation_data_path: "${TEXT_DEV}",
  model: {
    type: "spinn_classifier",
    text_field_embedder: {
      token_embedders: { tokens: { type: "embedding", embedding_dim: embedding_dim } },
    },
    encoder: {
      type: "spinn",
      input_dim: embedding_dim,
      hidden_dim: 150,
      tracker: { tracking_dim: 64, predict_transitions: true },
      projection: { dropout: 0.2 },
    },
    mlp_layers: 1,
    mlp_dim: 256,
    dropout: 0.2,
    transition_loss_weight: 3.9,
  },
  data_loader: { batch_sampler: { type: "bucket", batch_size: 32, sorting_keys: ["tokens"] } },
  trainer: {
    optimizer: { type: "adam", lr: 0.001 },
    num_epochs: 10,
    patience: 3,
    validation_metric: "+accuracy",
    grad_norm: 5.0,
    learning_rate_scheduler: { type: "reduce_on_plateau", factor: 0.5, mode: "max", patience: 1 },
  },
}
