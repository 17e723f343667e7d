// ListOps, a parser of its own trained by the task alone, with the best-draw estimator: disjoint
// syntax and semantics (Havrylov et al. 2019) in SPINN form. The encoder's own layers are the
// task's composition alone, SPINN-PI-NT (exactly a TreeLSTM), composed level by level over the
// trees the parser draws; the parser is a network of its own (its own embeddings, a leaf LSTM,
// its own thin stack of TreeLSTM nodes and the tracking LSTM that scores SHIFT and REDUCE) that
// reads nothing of the composition (modules/own_parser.py). It learns from the task's loss
// alone: 4 trees drawn per line, the best of the 4 pushed up and the rest down (the best-draw
// baseline, modules/policy_gradient.py), after 2,000 batches frozen while the composition
// learns on its near-uniform trees (parser_warmup). The parser has a 10x smaller learning rate.
// Greedy trees at evaluation. Results: results/listops/about.md.
local common = import "listops_common.libsonnet";
{
  dataset_reader: common.dataset_reader(),
  validation_dataset_reader: common.validation_dataset_reader(),
  train_data_path: common.train_data_path,
  validation_data_path: common.validation_data_path,
  test_data_path: common.test_data_path,
  evaluate_on_test: common.evaluate_on_test,
  model: common.model({
    type: "spinn",
    input_dim: common.embedding_dim,
    hidden_dim: common.hidden_dim,
    // Half the composition's size: the parser runs the 2N - 1 sequential steps, forward and
    // backward, for 4 draws a line (at 128/128/64 a protocol batch took 1.7x as long; the
    // pilots' parser is this size).
    parser: { embedding_dim: 64, hidden_dim: 64, tracking_dim: 32 },
  }) + {
    policy_gradient: { entropy_weight: 1e-4, draws: 4, baseline: "best_draw" },
  },
  data_loader: common.data_loader,
  validation_data_loader: common.validation_data_loader,
  trainer: common.trainer() + {
    optimizer+: { parameter_groups: [[["_encoder\\.parser\\."], { lr: 1e-4 }]] },
    callbacks+: [{ type: "parser_warmup", batches: 2000 }],
  },
}
