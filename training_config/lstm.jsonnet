// The path the project is known by: the same config as pair_classification/lstm.jsonnet.
import "pair_classification/lstm.jsonnet"
