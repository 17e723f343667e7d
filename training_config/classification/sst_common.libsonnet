// The Stanford Sentiment Treebank with a label on every node (Tai et al. 2015, §4.1 and §5.3).
//
// Data: SST's PTB-format trees as bundled in data/sst (gzipped, unchanged); "${SST_TRAIN:-...}"
// strings are expanded by the reader, so SST_TRAIN=... SST_DEV=... SST_TEST=... allennlp train ...
// points a run at other copies. Model selection on dev root accuracy.
//
// Training as the paper's: AdaGrad, learning rate 0.05 (word vectors 0.1), batch 25, L2 1e-4 on
// the model's weights (not the word vectors), dropout 0.5 before the softmax layer. No GloVe is
// at hand, so the 300-d word vectors are learned from scratch (the paper's "randomly
// initialized vectors" row: 43.9 / 82.0 for its constituency Tree-LSTM); word dropout trains the
// unknown-word vector that dev/test words outside the training vocabulary map to.
// Chosen on dev root accuracy (5-class, SPINN-PI-NT, one seed, results/sst): words lowercased and
// dropout 0.3 on the word projection; 10 epochs at most (dev accuracy peaks by epoch 3-6).
{
  embedding_dim:: 300,
  labels:: {
    "5-class": ["very negative", "negative", "neutral", "positive", "very positive"],
    "2-class": ["negative", "positive"],
  },

  encoders:: {
    // SPINN-PI-NT: exactly the paper's binary constituency Tree-LSTM (memory 150, Table 1).
    spinn_pi_nt: {
      type: "spinn", input_dim: $.embedding_dim, hidden_dim: 150, projection: { dropout: 0.3 },
    },
    // SPINN-PI: + a tracking LSTM feeding every composition.
    spinn_pi: {
      type: "spinn",
      input_dim: $.embedding_dim,
      hidden_dim: 150,
      tracker: { tracking_dim: 64 },
      projection: { dropout: 0.3 },
    },
    // Full SPINN: + its own parser, trained on SST's trees, following its own parse at test time.
    spinn: {
      type: "spinn",
      input_dim: $.embedding_dim,
      hidden_dim: 150,
      tracker: { tracking_dim: 64, predict_transitions: true },
      projection: { dropout: 0.3 },
    },
    // The Child-Sum Tree-LSTM over head-rule dependency trees (memory 168, Table 1).
    child_sum: {
      type: "child_sum_tree_lstm", input_dim: $.embedding_dim, hidden_dim: 168, input_dropout: 0.3,
    },
    // AllenNLP's LSTM on the root label (memory 168, Table 1) and its bidirectional version.
    lstm: { type: "lstm", input_size: $.embedding_dim, hidden_size: 168 },
    bilstm: { type: "lstm", input_size: $.embedding_dim, hidden_size: 168, bidirectional: true },
  },

  sst(granularity, encoder):: {
    dataset_reader: {
      type: "sst_trees",
      granularity: granularity,
      dependencies: encoder == "child_sum",
      lowercase: true,
      // Trees for raw text at prediction time (training and evaluation use SST's own trees).
      tree_source: { type: "balanced" },
    },
    train_data_path: "${SST_TRAIN:-data/sst/train.txt.gz}",
    validation_data_path: "${SST_DEV:-data/sst/dev.txt.gz}",
    test_data_path: "${SST_TEST:-data/sst/test.txt.gz}",
    evaluate_on_test: false,
    datasets_for_vocab_creation: ["train"],
    model: {
      type: "tree_node_classifier",
      text_field_embedder: {
        token_embedders: {
          tokens: { type: "embedding", embedding_dim: $.embedding_dim, trainable: true },
        },
      },
      encoder: $.encoders[encoder],
      num_labels: std.length($.labels[granularity]),
      label_names: $.labels[granularity],
      dropout: 0.5,
      word_dropout: 0.1,
      // The paper's alpha (Table 2, full SPINN).
      transition_loss_weight: if encoder == "spinn" then 3.9 else 0.0,
      regularizer: { regexes: [["^(?!_embedder).*weight", { type: "l2", alpha: 1e-4 }]] },
    },
    data_loader: {
      batch_sampler: { type: "bucket", batch_size: 25, sorting_keys: ["tokens"] },
    },
    validation_data_loader: {
      batch_sampler: { type: "bucket", batch_size: 128, sorting_keys: ["tokens"] },
    },
    trainer: {
      optimizer: {
        type: "adagrad",
        lr: 0.05,
        parameter_groups: [[["^_embedder"], { lr: 0.1 }]],
      },
      num_epochs: 10,
      patience: 4,
      validation_metric: "+root_accuracy",
    },
  },
}
