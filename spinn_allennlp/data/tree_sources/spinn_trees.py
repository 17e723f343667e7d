"""Trees from the parser of a trained full SPINN."""

import logging
from typing import Any, List, Optional, Sequence

from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.models.archival import load_archive

from spinn_allennlp.data.paths import expand_path
from spinn_allennlp.data.tree_sources.tree_source import TreeSource, TreeSourceError
from spinn_allennlp.settings_errors import configuration_errors
from spinn_core import rules
from spinn_core.output import PREDICTED
from spinn_core.transitions import PAD

logger = logging.getLogger(__name__)


@TreeSource.register("spinn")
class SpinnParserTrees(TreeSource):
    """The trees a trained full SPINN's own parser builds (paper §3.4): its transition
    classifier, run over the sentence with the tracking LSTM, choosing SHIFT or REDUCE at each
    step (only legal choices, so every tree is valid).

    The archive is a pair model of this project with a parser (`spinn_nli` with
    `predict_transitions: true`, e.g. `training_config/spinn.jsonnet`), loaded on first use. Each
    sentence goes through the archive's own reader (its tokens as given, lowercased if the model
    was trained so) as the premise of a pair whose hypothesis is its first word, and the premise
    tree the model followed is the answer: exactly what the model parses for that sentence in a
    pair, up to float rounding from the batch it is in.

    Registered as a `TreeSource` with name "spinn".

    # Parameters

    archive : `str`
        A `model.tar.gz` of a model with a parser (`${VAR:-default}` expanded).
    batch_size : `int`, optional (default = `64`)
        Sentences per model call.
    cuda_device : `int`, optional (default = `-1`)
        The device to parse on (-1: CPU).
    """

    name = "spinn"

    def __init__(self, archive: str, batch_size: int = 64, cuda_device: int = -1) -> None:
        self.archive = archive
        self.batch_size = batch_size
        self.cuda_device = cuda_device
        self._model: Any = None
        self._reader: Optional[DatasetReader] = None

    def _load(self) -> None:
        archive = load_archive(expand_path(self.archive), cuda_device=self.cuda_device)
        model = archive.model
        with configuration_errors():
            rules.check_parser_archive(self.archive, getattr(model, "has_parser", False))
        model.eval()
        # The archive's reader as configured, but sentences whole and without a tree source of
        # its own: the model's parser must make every tree.
        params = archive.config.duplicate().get("validation_dataset_reader", None)
        if params is None:
            params = archive.config.duplicate()["dataset_reader"]
        reader_params = params.as_dict()
        for key in ("tree_source", "crop_pad_length", "max_length"):
            reader_params.pop(key, None)
        self._reader = DatasetReader.from_params(Params(reader_params))
        self._model = model
        logger.info("SPINN parser loaded from %s", self.archive)

    def transitions_batch(self, sentences: Sequence[Sequence[str]]) -> List[List[int]]:
        if self._model is None:
            self._load()
        results: List[List[int]] = []
        for first in range(0, len(sentences), self.batch_size):
            results += self._parse(sentences[first : first + self.batch_size])
        return results

    def _parse(self, sentences: Sequence[Sequence[str]]) -> List[List[int]]:
        assert self._reader is not None
        to_parse = [list(tokens) for tokens in sentences if tokens]
        instances = [self._reader.text_to_instance(tokens, tokens[:1]) for tokens in to_parse]
        for instance in instances:
            self._reader.apply_token_indexers(instance)
        outputs = iter(self._model.forward_on_instances(instances) if instances else [])
        results: List[List[int]] = []
        for tokens in sentences:
            if not tokens:
                results.append([])
                continue
            output = next(outputs)
            if output.get("premise_transitions_source") != PREDICTED:
                raise TreeSourceError(
                    "the model did not parse the sentence itself "
                    f"({output.get('premise_transitions_source')})"
                )
            results.append([int(t) for t in output["premise_transitions"] if int(t) != PAD])
        return results
