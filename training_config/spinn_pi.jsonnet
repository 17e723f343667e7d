// The path the project is known by: the same config as pair_classification/spinn_pi.jsonnet.
import "pair_classification/spinn_pi.jsonnet"
