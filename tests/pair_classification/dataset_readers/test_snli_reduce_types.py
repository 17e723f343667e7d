"""The SNLI reader's typed REDUCEs (reduce_types=true) on real and broken SNLI lines."""

import pytest

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import REDUCE

FIXTURES = FIXTURES_ROOT / "pair_classification" / "snli"


def test_types_align_with_the_reduces():
    reader = SnliTransitionsReader(reduce_types=True)
    instances = list(reader.read(str(FIXTURES / "snli_sample.jsonl")))
    assert instances and reader.skipped == {}
    for instance in instances:
        for side in ("premise", "hypothesis"):
            transitions = instance[f"{side}_transitions"].tensor
            types = instance[f"{side}_reduce_types"].tensor
            assert types.shape == transitions.shape
            assert ((types >= 0) == (transitions == REDUCE)).all()
    assert (
        "premise_reduce_types"
        not in next(iter(SnliTransitionsReader().read(str(FIXTURES / "snli_sample.jsonl")))).fields
    )


def test_broken_labeled_parses_are_skipped_and_counted():
    reader = SnliTransitionsReader(reduce_types=True)
    instances = list(reader.read(str(FIXTURES / "malformed_labeled.jsonl")))
    assert len(instances) == 1
    assert reader.skipped == {
        "missing field": 1,
        "malformed labeled parse": 1,
        "labeled parse doesn't match the binary parse": 1,
    }


def test_not_with_crop_pad():
    with pytest.raises(ValueError, match="crop_pad_length"):
        SnliTransitionsReader(reduce_types=True, crop_pad_length=25)
