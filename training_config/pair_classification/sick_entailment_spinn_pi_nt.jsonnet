// SICK entailment (3-way) through the SNLI model: SPINN-PI-NT with the paper's NLI head
// (Table 2's SPINN-PI-NT column), trees from the SICK reader's tree source (balanced by
// default; see training_config/relatedness/sick_common.libsonnet). Selection on TRIAL accuracy.
local common = import "nli_common.libsonnet";
local pi_nt = import "spinn_pi_nt.jsonnet";
local sick = import "../relatedness/sick_common.libsonnet";
pi_nt + {
  dataset_reader: sick.reader("spinn_pi_nt", "entailment"),
  train_data_path: sick.data + "#TRAIN",
  validation_data_path: sick.data + "#TRIAL",
  test_data_path: sick.data + "#TEST",
  data_loader: common.data_loader,
}
