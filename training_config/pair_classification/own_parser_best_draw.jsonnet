// SNLI, a parser of its own trained by the task alone with the best-draw estimator (the SNLI
// twin of classification/listops_own_parser_best_draw.jsonnet): the encoder's own layers are
// SPINN-PI-NT (exactly a TreeLSTM, as spinn_pi_nt.jsonnet), composed level by level over the
// trees a separate parser draws (modules/own_parser.py: its own 100-d embeddings, a leaf LSTM,
// its own TreeLSTM stack and a 61-d tracking LSTM; nothing passes between the two but the
// trees). 4 trees drawn per sentence, the best of the 4 pushed up and the rest down; the parser
// frozen for its first 500 batches (about three epochs of the 1 % subset) while the
// composition learns on its near-uniform trees, then trained at a tenth of the learning rate.
// Greedy trees at evaluation; the Stanford parses the reader gives only score them.
local pi_nt = import "spinn_pi_nt.jsonnet";
local common = import "nli_common.libsonnet";
pi_nt + {
  // The model parses raw text itself: no tree source.
  dataset_reader: common.dataset_reader,
  model+: {
    encoder+: {
      parser: { embedding_dim: 100, hidden_dim: 100, tracking_dim: 61 },
    },
    policy_gradient: { entropy_weight: 1e-4, draws: 4, baseline: "best_draw" },
  },
  trainer+: {
    optimizer+: { parameter_groups: [[["_encoder\\.parser\\."], { lr: 3e-5 }]] },
    callbacks+: [{ type: "parser_warmup", batches: 500 }],
  },
}
