// allennlp-models' training_config/pair_classification/bimpm.jsonnet (BiMPM, Wang et al. 2017:
// their `bimpm` model, its matchers and trainer block) on SNLI with their `snli` reader, and our
// "spinn" encoder as BiMPM's aggregator (a Seq2VecEncoder over each sentence's matching vectors)
// in place of their two-layer BiLSTM; its 200-d output keeps their classifier's 400-d input.
// No trees reach it: SPINN-PI-NT composes each sentence's balanced binary tree.
// Changes this machine forces: the bundled SNLI files unzipped by `make plain-data` (their
// reader does not read .gz); our "ptb_spacy" tokenizer (their reader's default spaCy model
// cannot be downloaded here); no GloVe (idem), so the word embedding trains. Their
// `"lazy": false` is gone (AllenNLP 2 readers take no such option). Needs the "models" extra
// (`make setup` installs it):
//   make plain-data
//   allennlp train training_config/allennlp_models/snli_bimpm_spinn.jsonnet -s out/snli_bimpm_spinn \
//     --include-package spinn_allennlp
{
  "dataset_reader": {
    "type": "snli",
    "tokenizer": {
      "type": "ptb_spacy"
    },
    "token_indexers": {
      "tokens": {
        "type": "single_id",
        "lowercase_tokens": false
      },
      "token_characters": {
        "type": "characters"
      }
    }
  },
  "train_data_path": "out/data/snli/snli_1.0_train_0.01.jsonl",
  "validation_data_path": "out/data/snli/snli_1.0_dev.jsonl",
  "test_data_path": "out/data/snli/snli_1.0_test.jsonl",
  "model": {
    "type": "bimpm",
    "dropout": 0.1,
    "text_field_embedder": {
      "token_embedders": {
        "tokens": {
          "type": "embedding",
          "embedding_dim": 300,
          "trainable": true,
          "padding_index": 0
        },
        "token_characters": {
          "type": "character_encoding",
          "embedding": {
            "embedding_dim": 20,
            "padding_index": 0
          },
          "encoder": {
            "type": "gru",
            "input_size": 20,
            "hidden_size": 50,
            "num_layers": 1,
            "bidirectional": true
          }
        }
      }
    },
    "matcher_word": {
      "is_forward": true,
      "hidden_dim": 400,
      "num_perspectives": 10,
      "with_full_match": false
    },
    "encoder1": {
      "type": "lstm",
      "bidirectional": true,
      "input_size": 400,
      "hidden_size": 200,
      "num_layers": 1
    },
    "matcher_forward1": {
      "is_forward": true,
      "hidden_dim": 200,
      "num_perspectives": 10
    },
    "matcher_backward1": {
      "is_forward": false,
      "hidden_dim": 200,
      "num_perspectives": 10
    },
    "encoder2": {
      "type": "lstm",
      "bidirectional": true,
      "input_size": 400,
      "hidden_size": 200,
      "num_layers": 1
    },
    "matcher_forward2": {
      "is_forward": true,
      "hidden_dim": 200,
      "num_perspectives": 10
    },
    "matcher_backward2": {
      "is_forward": false,
      "hidden_dim": 200,
      "num_perspectives": 10
    },
    "aggregator": {
      "type": "spinn",
      "input_dim": 264,
      "hidden_dim": 200
    },
    "classifier_feedforward": {
      "input_dim": 400,
      "num_layers": 2,
      "hidden_dims": [200, 3],
      "activations": ["relu", "linear"],
      "dropout": [0.1, 0.0]
    },
    "initializer": {
      "regexes": [
        [".*linear_layers.*weight", {"type": "xavier_normal"}],
        [".*linear_layers.*bias", {"type": "constant", "val": 0}],
        [".*weight_ih.*", {"type": "xavier_normal"}],
        [".*weight_hh.*", {"type": "orthogonal"}],
        [".*bias.*", {"type": "constant", "val": 0}],
        [".*matcher.*match_weights.*", {"type": "kaiming_normal"}]
      ]
    }
  },
  "data_loader": {
    "batch_sampler": {
      "type": "bucket",
      "padding_noise": 0.1,
      "batch_size" : 32
    }
  },

  "trainer": {
    "num_epochs": 40,
    "patience": 10,
    "grad_clipping": 5.0,
    "validation_metric": "+accuracy",
    "optimizer": {
      "type": "adam",
      "lr": 0.0005
    }
  }
}
