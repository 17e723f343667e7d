// Shared pieces of the Chen et al. (2017) configs: ESIM, the syntactic tree-LSTM inference
// model and HIM. Their §4: Adam (0.9, 0.999), learning rate 4e-4, batch 32, 300-d word
// embeddings and hidden states everywhere (BiLSTM 300 per direction, so 600-d states: their
// "600D ESIM"; tree-LSTM 300), dropout 0.5 on the feedforward connections, F a one-layer ReLU
// network, an MLP with one tanh hidden layer. Their embeddings start from GloVe 840B; none is
// bundled here, so they are learned from scratch (override as in nli_common.libsonnet to use
// GloVe). Not in the paper, so ours: gradient norm clipped at 10, Xavier initialisation of the
// feedforward and input weights, orthogonal LSTM recurrent weights, zero biases, early stopping
// on dev accuracy (patience 8).
local common = import "nli_common.libsonnet";
{
  dim: 300,
  dropout: 0.5,

  // Pieces every one of these configs takes as they are from the SPINN configs.
  data: {
    dataset_reader: common.dataset_reader,
    train_data_path: common.train_data_path,
    validation_data_path: common.validation_data_path,
    datasets_for_vocab_creation: common.datasets_for_vocab_creation,
    data_loader: common.data_loader,
    validation_data_loader: common.validation_data_loader,
  },
  // Raw text at prediction time gets its trees from a tree source: our benepar model, as the
  // SPINN-PI-NT and SPINN-PI configs (SNLI's lines keep their own parses).
  tree_dataset_reader: common.reader_with_benepar,

  initializer: {
    regexes: [
      [".*weight_hh.*", { type: "orthogonal" }],
      [".*weight_ih.*", { type: "xavier_uniform" }],
      [".*_feedforward.*weight", { type: "xavier_uniform" }],
      [".*_output_logit.weight", { type: "xavier_uniform" }],
      [".*compose.linear.weight", { type: "xavier_uniform" }],
      [".*bias.*", { type: "zero" }],
    ],
  },

  feedforward(input_dim, activation):: {
    input_dim: input_dim,
    num_layers: 1,
    hidden_dims: $.dim,
    activations: activation,
    dropout: if activation == "tanh" then $.dropout else 0.0,
  },

  esim_model: {
    type: "esim_nli",
    text_field_embedder: common.text_field_embedder,
    encoder: {
      type: "lstm", input_size: $.dim, hidden_size: $.dim, num_layers: 1, bidirectional: true,
    },
    projection_feedforward: $.feedforward(4 * 2 * $.dim, "relu"),
    inference_encoder: {
      type: "lstm", input_size: $.dim, hidden_size: $.dim, num_layers: 1, bidirectional: true,
    },
    output_feedforward: $.feedforward(4 * 2 * $.dim, "tanh"),
    dropout: $.dropout,
    initializer: $.initializer,
  },

  tree_model: {
    type: "tree_esim_nli",
    text_field_embedder: common.text_field_embedder,
    // Leaves: the cell on their word; constituents: a learned "no word" input (eq. 3-10).
    encoder: { type: "spinn", input_dim: $.dim, hidden_dim: $.dim, leaf: "cell" },
    projection_feedforward: $.feedforward(4 * $.dim, "relu"),
    // Every node takes its own projected enhanced vector (eq. 16-17).
    inference_encoder: {
      type: "spinn", input_dim: $.dim, hidden_dim: $.dim, leaf: "cell",
      learned_constituent_input: false,
    },
    // Average and max over the nodes of each side, plus both roots: 6 x 300.
    output_feedforward: $.feedforward(6 * $.dim, "tanh"),
    dropout: $.dropout,
    initializer: $.initializer,
  },

  trainer: {
    optimizer: { type: "adam", lr: 4e-4, betas: [0.9, 0.999] },
    num_epochs: 30,
    patience: 8,
    validation_metric: "+accuracy",
    grad_norm: 10.0,
    // Exact `allennlp train --recover` after an interruption, as the SPINN configs.
    callbacks: [{ type: "restore_random_state" }],
  },
}
