from spinn_allennlp.training.callbacks.encoder_schedule import EncoderSchedule
from spinn_allennlp.training.callbacks.module_gradient_clipping import ModuleGradientClipping
from spinn_allennlp.training.callbacks.parser_temperature_schedule import (
    ParserTemperatureSchedule,
)
from spinn_allennlp.training.callbacks.parser_updates import ParserUpdates
from spinn_allennlp.training.callbacks.parser_warmup import ParserWarmup
from spinn_allennlp.training.callbacks.random_state import (
    RestoreRandomState,
    get_random_state,
    set_random_state,
)
from spinn_allennlp.training.callbacks.self_transition_schedule import SelfTransitionSchedule

__all__ = [
    "EncoderSchedule",
    "ModuleGradientClipping",
    "ParserTemperatureSchedule",
    "ParserUpdates",
    "ParserWarmup",
    "RestoreRandomState",
    "SelfTransitionSchedule",
    "get_random_state",
    "set_random_state",
]
