// SICK relatedness (Tai et al. 2015, §4.2 and §5.3): sentence A and B of each pair through one
// shared encoder, the paper's similarity head (hidden layer 50), KL divergence to the sparse
// target distribution; model selection on the TRIAL split (the paper's dev set), by Pearson r.
//
// Data: SICK.txt holds all splits; "#TRAIN", "#TRIAL", "#TEST" select them by SemEval_set.
// Bundled in data/sick (gzipped, unchanged); "${SICK:-...}" is expanded by the reader:
// SICK=/path/to/SICK.txt allennlp train ... reads another copy.
//
// Trees: SICK has no parses; every sentence gets its tree from the reader's tree source
// (balanced by default). Another source: --overrides '{"dataset_reader.tree_source.type":
// "right_branching"}' (or a parser's source, e.g. benepar or spinn, when installed).
//
// Training as the paper's: AdaGrad 0.05, batch 25, L2 1e-4 on the model's weights. The paper
// kept its GloVe vectors fixed; none is at hand, so the word vectors are learned here.
{
  data:: "${SICK:-data/sick/SICK.txt.gz}",
  embedding_dim:: 300,

  encoders:: {
    // SPINN-PI-NT = the paper's binary constituency Tree-LSTM (memory 142 for SICK, Table 1).
    spinn_pi_nt: { type: "spinn", input_dim: $.embedding_dim, hidden_dim: 142 },
    // The Child-Sum Tree-LSTM on head-rule dependency trees (memory 150, Table 1).
    child_sum: { type: "child_sum_tree_lstm", input_dim: $.embedding_dim, hidden_dim: 150 },
    // AllenNLP's LSTM (memory 150, Table 1).
    lstm: { type: "lstm", input_size: $.embedding_dim, hidden_size: 150 },
  },

  reader(encoder, target="relatedness"):: {
    type: "sick",
    target: target,
    tree_source: { type: "balanced" },
    dependencies: encoder == "child_sum",
    lowercase: true,
  },

  sick(encoder):: {
    dataset_reader: $.reader(encoder),
    train_data_path: $.data + "#TRAIN",
    validation_data_path: $.data + "#TRIAL",
    test_data_path: $.data + "#TEST",
    evaluate_on_test: false,
    datasets_for_vocab_creation: ["train"],
    model: {
      type: "tree_relatedness",
      text_field_embedder: {
        token_embedders: {
          tokens: { type: "embedding", embedding_dim: $.embedding_dim, trainable: true },
        },
      },
      encoder: $.encoders[encoder],
      hidden_dim: 50,
      regularizer: { regexes: [["^(?!_embedder).*weight", { type: "l2", alpha: 1e-4 }]] },
    },
    data_loader: {
      batch_sampler: { type: "bucket", batch_size: 25, sorting_keys: ["premise", "hypothesis"] },
    },
    validation_data_loader: {
      batch_sampler: { type: "bucket", batch_size: 128, sorting_keys: ["premise", "hypothesis"] },
    },
    trainer: {
      optimizer: { type: "adagrad", lr: 0.05 },
      num_epochs: 20,
      patience: 5,
      validation_metric: "+pearson",
    },
  },
}
