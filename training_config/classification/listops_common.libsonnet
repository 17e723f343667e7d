// Shared pieces of the ListOps configs (Nangia and Bowman 2018; NSHRDLU Models 0-4).
//
// Data: the published test set is bundled (data/listops/test_d20s.tsv.gz); training and
// development data come from our generator, which reproduces the test set's distribution:
//   .venv/bin/python scripts/make_listops.py          # -> data/listops/generated/{train,dev}_d20s.tsv
// LISTOPS_TRAIN / LISTOPS_DEV / LISTOPS_TEST point a run elsewhere. The generated training file
// is in random order, so `--overrides '{"dataset_reader.max_instances": 20000}'` trains on a
// random subset of it.
//
// Sizes are small for CPU training (15 token types): D = 64, embeddings 64, one MLP layer.
// Training examples longer than 100 tokens are left out (counted by the reader; 10 % of the
// generated data, as of the test set): they cost most of the sequential models' steps. Dev and
// test keep every length.
{
  embedding_dim: 64,
  hidden_dim: 64,
  tracking_dim: 32,

  dataset_reader(gold_trees=true):: {
    type: "listops",
    gold_trees: gold_trees,
    max_length: 100,
  },
  // Dev and test: every line, every length. (`allennlp evaluate` reads the test file with this
  // reader; the README's runs capped it at 2,000 lines, which also capped their test set, and
  // were re-evaluated on all 10,000 test lines.)
  validation_dataset_reader(gold_trees=true):: {
    type: "listops", gold_trees: gold_trees,
  },
  train_data_path: "${LISTOPS_TRAIN:-data/listops/generated/train_d20s.tsv}",
  validation_data_path: "${LISTOPS_DEV:-data/listops/generated/dev_d20s.tsv}",
  test_data_path: "${LISTOPS_TEST:-data/listops/test_d20s.tsv.gz}",
  evaluate_on_test: false,

  text_field_embedder: {
    token_embedders: {
      tokens: { type: "embedding", embedding_dim: $.embedding_dim, trainable: true },
    },
  },
  model(encoder, transition_loss_weight=0.0):: {
    type: "spinn_classifier",
    text_field_embedder: $.text_field_embedder,
    encoder: encoder,
    mlp_layers: 1,
    mlp_dim: 128,
    transition_loss_weight: transition_loss_weight,
  },

  // Length bucketing; ListOps examples run from 4 to ~1,000 tokens.
  data_loader: {
    batch_sampler: { type: "bucket", batch_size: 128, sorting_keys: ["tokens"] },
  },
  validation_data_loader: {
    batch_sampler: { type: "bucket", batch_size: 256, sorting_keys: ["tokens"] },
  },

  trainer(lr=2e-3, num_epochs=20):: {
    optimizer: { type: "adam", lr: lr },
    num_epochs: num_epochs,
    patience: 3,
    validation_metric: "+accuracy",
    grad_norm: 5.0,
  },
}
