// SICK relatedness: AllenNLP's LSTM (no trees).
local sick = import "sick_common.libsonnet";
sick.sick("lstm")
