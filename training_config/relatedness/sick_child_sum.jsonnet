// SICK relatedness: the Child-Sum Tree-LSTM over head-rule dependency trees of the tree source's trees.
local sick = import "sick_common.libsonnet";
sick.sick("child_sum")
