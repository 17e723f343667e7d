"""The legal-move rule — SHIFT needs a word left, REDUCE needs two items on the stack — is said
in several forms, each where it is needed, and this test pins them to the one of
`policies.forced_moves` (what every discrete policy's `Step.legal` imposes) in every state a
sentence of up to 5 words can reach:

* the fold that checks and reads transition sequences (`transitions.fold`: a move it refuses
  is illegal);
* the batched check of given transitions (`batch.check_given_transitions`: a row with that
  move, completed legally, is refused exactly when the move is illegal);
* the soft stack's continuous form (`runners/soft_stack.py`: REDUCE's strength scaled by
  `unit_clamp(height - 1)`, SHIFT's by `unit_clamp(words left)`), at integer strengths: the
  move it makes of a parser's 0 or 1 is the one `Step.legal` makes of it.
"""

import itertools

import pytest
import torch

from spinn_core.batch import check_given_transitions
from spinn_core.policies import forced_moves, impose_forced
from spinn_core.runners.soft_stack import unit_clamp
from spinn_core.transitions import REDUCE, SHIFT, InvalidTransitionsError, fold


def reachable(num_words: int):
    """Every legal prefix of a sentence of ``num_words`` words that has not ended, with the
    stack's depth and the words left after it."""
    prefixes = [[]]
    while prefixes:
        prefix = prefixes.pop()
        depth = prefix.count(SHIFT) - prefix.count(REDUCE)
        left = num_words - prefix.count(SHIFT)
        if left == 0 and depth == 1:
            continue  # the sentence has ended
        yield prefix, depth, left
        if left > 0:
            prefixes.append(prefix + [SHIFT])
        if depth >= 2:
            prefixes.append(prefix + [REDUCE])


def rule(depth: int, left: int):
    """(must_shift, must_reduce) of `forced_moves` in that state."""
    must_shift, must_reduce = forced_moves(torch.tensor([depth < 2]), torch.tensor([left == 0]))
    return bool(must_shift), bool(must_reduce)


def legal_by_rule(move: int, depth: int, left: int) -> bool:
    must_shift, must_reduce = rule(depth, left)
    return not (must_shift and move == REDUCE) and not (must_reduce and move == SHIFT)


def legal_by_fold(prefix, move: int, num_words: int) -> bool:
    try:
        fold(prefix + [move], lambda *_: None, lambda *_: None, num_tokens=num_words)
    except InvalidTransitionsError:
        return False
    return True


def legal_by_batch_check(prefix, move: int, num_words: int) -> bool:
    sequence = prefix + [move]
    shifted = sequence.count(SHIFT)
    depth = shifted - sequence.count(REDUCE)
    # Completed legally whatever the move did: the words left, then REDUCEs down to one tree.
    rest = [SHIFT] * max(num_words - shifted, 0)
    rest += [REDUCE] * max(depth + len(rest) - 1, 0)
    row = torch.tensor([sequence + rest])
    try:
        check_given_transitions(row, torch.tensor([num_words]))
    except ValueError:
        return False
    return True


def policy_move(wanted: int, depth: int, left: int) -> int:
    """The move `Step.legal` makes of a parser's wanted move: the forced moves imposed."""
    must_shift, must_reduce = forced_moves(torch.tensor([depth < 2]), torch.tensor([left == 0]))
    return int(impose_forced(torch.tensor([wanted]), must_shift, must_reduce))


def soft_move(wanted: int, depth: int, left: int) -> int:
    """The soft stack's move of a parser's strength 0 (SHIFT) or 1 (REDUCE), at integers."""
    reduce_raw = torch.tensor(float(wanted), dtype=torch.float64)
    has_word = unit_clamp(torch.tensor(float(left), dtype=torch.float64))
    two_items = unit_clamp(torch.tensor(float(depth - 1), dtype=torch.float64))
    reduce = (1 - (1 - reduce_raw) * has_word) * two_items
    assert float(reduce) in (0.0, 1.0)
    return REDUCE if float(reduce) == 1.0 else SHIFT


@pytest.mark.parametrize("num_words", [1, 2, 3, 4, 5])
def test_every_form_of_the_rule_agrees_in_every_reachable_state(num_words):
    states = 0
    for prefix, depth, left in reachable(num_words):
        states += 1
        for move in (SHIFT, REDUCE):
            expected = legal_by_rule(move, depth, left)
            assert legal_by_fold(prefix, move, num_words) == expected, (prefix, move)
            assert legal_by_batch_check(prefix, move, num_words) == expected, (prefix, move)
            assert soft_move(move, depth, left) == policy_move(move, depth, left), (prefix, move)
    assert states > 0


def test_the_states_cover_both_forced_moves_and_free_ones():
    seen = {rule(depth, left) for n in range(1, 6) for _, depth, left in reachable(n)}
    assert seen == {(True, False), (False, True), (False, False)}
    assert list(itertools.islice(reachable(2), 1)) == [([], 0, 2)]
