// Shared pieces of the SNLI configs (Bowman et al. 2016, §4.1 and Table 2).
//
// Data paths: "${VAR:-default}" strings are expanded by the snli_transitions reader, so
//   SNLI_TRAIN=... SNLI_DEV=... allennlp train ...
// points a run at other files; the defaults are the copies bundled in data/snli (relative to
// the directory allennlp is run from: the repository root; run elsewhere, the reader's error
// names the variable to set).
//
// Embeddings: 300-d, learned from scratch by default (no GloVe is bundled). To use frozen
// pretrained vectors as the paper does:
//   --overrides '{"model.text_field_embedder.token_embedders.tokens.pretrained_file": "glove.840B.300d.txt.gz",
//                 "model.text_field_embedder.token_embedders.tokens.trainable": false}'
{
  embedding_dim: 300,
  hidden_dim: 300,

  dataset_reader: { type: "snli_transitions" },
  // Trees for raw text at prediction time, for the models without a parser of their own: our
  // benepar model (models/benepar_snli_1pct.pt; a path or "benepar_en3" work too). Lines with
  // binary parses (all of SNLI) keep theirs, so training is unchanged.
  reader_with_benepar: $.dataset_reader { tree_source: { type: "benepar", model: "benepar_snli_1pct" } },
  train_data_path: "${SNLI_TRAIN:-data/snli/snli_1.0_train_0.01.jsonl.gz}",
  validation_data_path: "${SNLI_DEV:-data/snli/snli_1.0_dev.jsonl.gz}",
  // No test_data_path: AllenNLP loads it whenever it is given, evaluate_on_test or not. Test
  // accuracy comes from `allennlp evaluate model.tar.gz data/snli/snli_1.0_test.jsonl.gz`
  // (or add both with --overrides).
  // The vocabulary comes from the training data only: dev and test words stay unknown.
  datasets_for_vocab_creation: ["train"],

  text_field_embedder: {
    token_embedders: {
      tokens: { type: "embedding", embedding_dim: $.embedding_dim, trainable: true },
    },
  },

  // He initialisation (§4.1) for the encoder's weight matrices; the model itself gives its MLP
  // He initialisation and its softmax layer U[-0.005, 0.005]. Normalisation layers (the batch
  // norms, the GRC's layer norm `composition.norm`) keep their ones: their weights are vectors,
  // which He initialisation refuses.
  initializer: {
    regexes: [["_encoder.*weight.*", { type: "kaiming_normal" }]],
    prevent_regexes: [".*batch_norm.*", ".*\\.norm\\..*"],
  },

  // Length bucketing instead of the paper's crop/pad to 25 words.
  // drop_last: a last batch of one pair would break batch normalisation in training.
  data_loader: {
    batch_sampler: {
      type: "bucket", batch_size: 32, sorting_keys: ["premise", "hypothesis"], drop_last: true,
    },
  },
  validation_data_loader: {
    batch_sampler: { type: "bucket", batch_size: 128, sorting_keys: ["premise", "hypothesis"] },
  },

  trainer(lr):: {
    optimizer: { type: "rmsprop", lr: lr },
    learning_rate_scheduler: { type: "step_decay_per_batch", decay_steps: 10000, gamma: 0.75 },
    num_epochs: 30,
    patience: 8,
    validation_metric: "+accuracy",
    grad_norm: 5.0,
    // No cuda_device: AllenNLP trains on GPU 0 when torch sees a GPU, else on the CPU. Choose
    // with --overrides '{"trainer.cuda_device": 1}' (-1 = CPU); several GPUs with
    // '{"distributed": {"cuda_devices": [0, 1]}}'.
    // Checkpoints keep the random generators' states, so `allennlp train --recover` after an
    // interruption ends exactly as an uninterrupted run would (see docs/robustness.md).
    callbacks: [{ type: "restore_random_state" }],
  },
  regularizer(l2):: { regexes: [[".*", { type: "l2", alpha: l2 }]] },
}
