// ListOps, NSHRDLU Model 2 initialised from a trained Model 1 (the plan's suggestion):
//   MODEL1_ARCHIVE=runs/listops/spinn/model.tar.gz allennlp train this.jsonnet ...
// The model (weights, sizes, vocabulary) is Model 1's archive; it trains on its own predicted
// transitions from the first batch (the archive's parser is already trained).
local spinn = import "listops_spinn.jsonnet";
local archive = std.extVar("MODEL1_ARCHIVE");
spinn + {
  vocabulary: { type: "from_files", directory: archive },
  model: { type: "from_archive", archive_file: archive },
  trainer+: {
    callbacks: [
      { type: "self_transition_schedule", start: 1.0, end: 1.0, ramp_batches: 0 },
    ] + super.callbacks,
  },
}
