// ListOps, REINFORCE with the parser frozen for its first 2,000 training batches (the
// parser_warmup callback): the composition first learns the task on the near-uniform trees of
// the untrained parser, then the parser learns from the task's reward. The parser is a network
// of its own (composition_reads_tracker: false) whose losses do not reach the nodes it reads
// (parser_trains_nodes: false): syntax and semantics kept apart, as Havrylov et al. (2019) do.
// Why the warm-up: results/listops/README.md, "Why they collapse".
local reinforce = import "listops_spinn_reinforce.jsonnet";
reinforce + {
  model+: {
    encoder+: { tracker+: { composition_reads_tracker: false, parser_trains_nodes: false } },
  },
  trainer+: {
    callbacks+: [{ type: "parser_warmup", batches: 2000 }],
  },
}
