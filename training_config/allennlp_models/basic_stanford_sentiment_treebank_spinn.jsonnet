// allennlp-models' training_config/classification/basic_stanford_sentiment_treebank.jsonnet
// (binary SST, their `sst_tokens` reader, AllenNLP's `basic_classifier`, their trainer block)
// with our "spinn" encoder in place of their two-layer LSTM. No trees reach a basic_classifier's
// encoder: SPINN-PI-NT composes each sentence's balanced binary tree.
// Two changes this machine forces: the data are the bundled SST files unzipped by
// `make plain-data` (their reader does not read .gz), and no GloVe (it cannot be downloaded
// here), so the embedding trains. Needs the "models" extra (`make setup` installs it):
//   make plain-data
//   allennlp train training_config/allennlp_models/basic_stanford_sentiment_treebank_spinn.jsonnet \
//     -s out/sst_basic_spinn --include-package spinn_allennlp
{
  "dataset_reader": {
    "type": "sst_tokens",
    "use_subtrees": true,
    "granularity": "2-class"
  },
  "validation_dataset_reader": {
    "type": "sst_tokens",
    "use_subtrees": false,
    "granularity": "2-class"
  },
  "train_data_path": "out/data/sst/train.txt",
  "validation_data_path": "out/data/sst/dev.txt",
  "test_data_path": "out/data/sst/test.txt",
  "model": {
    "type": "basic_classifier",
    "text_field_embedder": {
      "token_embedders": {
        "tokens": {
          "type": "embedding",
          "embedding_dim": 300,
          "trainable": true
        }
      }
    },
    "seq2vec_encoder": {
       "type": "spinn",
       "input_dim": 300,
       "hidden_dim": 300
    }
  },
  "data_loader": {
    "batch_sampler": {
      "type": "bucket",
      "batch_size" : 32
    }
  },
  "trainer": {
    "num_epochs": 5,
    "patience": 1,
    "grad_norm": 5.0,
    "validation_metric": "+accuracy",
    "optimizer": {
      "type": "adam",
      "lr": 0.001
    }
  }
}
