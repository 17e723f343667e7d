// Shared pieces of the ListOps configs (Nangia and Bowman 2018; NSHRDLU Models 0-4).
//
// Data: the published test set is bundled (data/listops/test_d20s.tsv.gz); training and
// development data come from our generator, which reproduces the test set's distribution:
//   .venv/bin/python scripts/make_listops.py          # -> data/listops/generated/{train,dev}_d20s.tsv
// LISTOPS_TRAIN / LISTOPS_DEV / LISTOPS_TEST point a run elsewhere. The generated training file
// is in random order, so `--overrides '{"dataset_reader.max_instances": 20000}'` trains on a
// random subset of it.
//
// The protocol (trained to convergence on a 2-core CPU, one thread per run): the whole
// generated training file (85,000 lines, the published 90k less our 5,000 dev lines), of which
// the 75,899 lines of at most 100 tokens are kept, as the published setups train (the reader
// counts the rest as dropped); dev and test keep every length, so the > 100-token test lines
// measure length generalisation. D = 128 (Ordered Memory's and Havrylov et al.'s size),
// embeddings 128, one MLP layer. Adam, the learning rate halved when dev accuracy has not
// improved for 2 epochs (`reduce_on_plateau`, registered by this plugin: AllenNLP's breaks on
// torch >= 2.7), gradients clipped at norm 1, up to 100 epochs with early stopping after 10
// epochs without improvement: the dev curve sits on a plateau at 60-66 % for ~2,500 updates
// before it climbs, which a short patience mistakes for convergence.
{
  embedding_dim: 128,
  hidden_dim: 128,
  tracking_dim: 64,

  dataset_reader(gold_trees=true):: {
    type: "listops",
    gold_trees: gold_trees,
    max_length: 100,
  },
  // Dev and test: every line, every length. (`allennlp evaluate` reads the test file with this
  // reader; the runs of results/listops capped it at 2,000 lines, which also capped their test
  // set, and were re-evaluated on all 10,000 test lines.)
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
    // Accuracy on lines of at most 100 tokens (the training lengths) and on the longer ones.
    length_buckets: [100],
  },

  // Length bucketing; ListOps examples run from 4 to ~1,000 tokens.
  data_loader: {
    batch_sampler: { type: "bucket", batch_size: 128, sorting_keys: ["tokens"] },
  },
  validation_data_loader: {
    batch_sampler: { type: "bucket", batch_size: 256, sorting_keys: ["tokens"] },
  },

  trainer(lr=1e-3, num_epochs=100, patience=10):: {
    optimizer: { type: "adam", lr: lr },
    learning_rate_scheduler: { type: "reduce_on_plateau", mode: "max", factor: 0.5, patience: 2 },
    num_epochs: num_epochs,
    patience: patience,
    validation_metric: "+accuracy",
    grad_norm: 1.0,
    // Checkpoints keep the random generators' states: `allennlp train --recover` after an
    // interruption ends as the uninterrupted run would (docs/robustness.md).
    callbacks: [{ type: "restore_random_state" }],
  },
}
