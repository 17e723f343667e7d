import random

import pytest

from spinn_core import transitions as tr
from spinn_core.testing import random_tree, tree_height
from spinn_core.transitions import PAD, REDUCE, SHIFT

S, R = SHIFT, REDUCE


def test_paper_example():
    tokens, transitions = tr.parse_to_transitions("( ( the cat ) ( sat down ) )")
    assert tokens == ["the", "cat", "sat", "down"]
    assert transitions == [S, S, R, S, S, R, R]


def test_real_snli_parse_round_trip():
    parse = (
        "( ( Two women ) ( ( are ( embracing ( while ( holding ( to ( go packages ) ) ) ) ) ) . ) )"
    )
    tokens, transitions = tr.parse_to_transitions(parse)
    assert tokens == "Two women are embracing while holding to go packages .".split()
    assert len(transitions) == 2 * len(tokens) - 1
    assert tr.transitions_to_string(tokens, transitions) == parse


@pytest.mark.parametrize("parse", ["word", "( word )", "( ( word ) )"])
def test_one_word(parse):
    assert tr.parse_to_transitions(parse) == (["word"], [S])


def test_two_words():
    assert tr.parse_to_transitions("( a b )") == (["a", "b"], [S, S, R])


@pytest.mark.parametrize(
    "parse,message",
    [
        ("( ( a b )", "unclosed"),
        ("( a b ) )", "unmatched"),
        ("( a b c )", "3 children"),
        ("( )", "empty brackets"),
        ("", "empty parse"),
        ("   ", "empty parse"),
    ],
)
def test_malformed(parse, message):
    with pytest.raises(tr.MalformedParseError, match=message):
        tr.parse_to_transitions(parse)


@pytest.mark.parametrize(
    "transitions,num_tokens,message",
    [
        ([S, R], 1, "REDUCE at step 1"),
        ([S, S], 2, "2 items left"),
        ([S, S, R], 3, "2 SHIFTs for 3 tokens"),
        ([S, S, S, R, R], 2, "empty buffer"),
        ([S, 7], None, "unknown transition"),
        ([], 0, "0 items left"),
    ],
)
def test_invalid_transitions(transitions, num_tokens, message):
    assert not tr.is_valid(transitions, num_tokens)
    with pytest.raises(tr.InvalidTransitionsError, match=message):
        tr.check_transitions(transitions, num_tokens)


def test_round_trips_on_random_trees():
    rng = random.Random(0)
    for _ in range(200):
        words = [f"w{i}" for i in range(rng.randint(1, 60))]
        tree = random_tree(words, rng)
        tokens, transitions = tr.tree_to_transitions(tree)
        assert tokens == words
        assert len(transitions) == 2 * len(words) - 1
        assert tr.transitions_to_tree(tokens, transitions) == tree
        assert tr.parse_to_transitions(tr.tree_to_string(tree)) == (tokens, transitions)


def test_deep_tree_has_no_recursion_limit():
    words = [str(i) for i in range(3000)]
    parse = "( " * 2999 + words[0] + " " + " ) ".join(words[1:]) + " )"
    tokens, transitions = tr.parse_to_transitions(parse)
    assert tokens == words and tr.is_valid(transitions, 3000)
    # Printing and cropping, both ways round (left-branching: cropping keeps the deep part).
    assert tr.transitions_to_string(tokens, transitions) == parse
    for deep in (transitions, tr.right_branching_transitions(3000)):
        cropped = tr.crop_tree_left(tr.transitions_to_tree(words, deep), 2500)
        cropped_tokens, cropped_transitions = tr.tree_to_transitions(cropped)
        assert cropped_tokens == words[500:] and tr.is_valid(cropped_transitions, 2500)


def test_crop_by_shift_reduce_equals_pruning_the_tree():
    """Cropping keeps the tree the original induces on the kept words: checked against a
    direct (recursive) pruning on random trees."""

    def prune(tree, keep):  # keep: set of kept words; None if nothing is kept
        if isinstance(tree, str):
            return tree if tree in keep else None
        left, right = prune(tree[0], keep), prune(tree[1], keep)
        return right if left is None else left if right is None else (left, right)

    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(1, 30)
        words = [str(i) for i in range(n)]
        tree = random_tree(words, rng)
        length = rng.randint(1, n)
        assert tr.crop_tree_left(tree, length) == prune(tree, set(words[n - length :]))
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        tr.crop_tree_left(("a", "b"), 0)


@pytest.mark.parametrize("n", range(1, 30))
def test_default_trees_are_valid(n):
    for make in (
        tr.balanced_transitions,
        tr.left_branching_transitions,
        tr.right_branching_transitions,
    ):
        assert tr.is_valid(make(n), n)


def test_balanced_shape():
    assert (
        tr.transitions_to_string(list("abcde"), tr.balanced_transitions(5))
        == "( ( ( a b ) c ) ( d e ) )"
    )


def test_crop_keeps_a_tree_over_the_last_words():
    tokens, transitions = tr.parse_to_transitions("( ( the cat ) ( sat ( down here ) ) )")
    cropped_tokens, cropped = tr.crop_pad_left(tokens, transitions, 3, "<pad>")
    assert cropped_tokens == ["sat", "down", "here"]
    assert tr.transitions_to_string(cropped_tokens, cropped) == "( sat ( down here ) )"
    cropped_tokens, cropped = tr.crop_pad_left(tokens, transitions, 4, "<pad>")
    assert tr.transitions_to_string(cropped_tokens, cropped) == "( cat ( sat ( down here ) ) )"


def test_pad_left_with_shifts():
    tokens, transitions = tr.parse_to_transitions("( the cat )")
    padded_tokens, padded = tr.crop_pad_left(tokens, transitions, 4, "<pad>")
    assert padded_tokens == ["<pad>", "<pad>", "the", "cat"]
    assert padded == [S, S, S, S, R, PAD, PAD]
    assert len(padded) == 2 * 4 - 1


def test_crop_pad_fixed_shape_on_random_trees():
    rng = random.Random(1)
    for _ in range(100):
        words = [f"w{i}" for i in range(rng.randint(1, 40))]
        tokens, transitions = tr.tree_to_transitions(random_tree(words, rng))
        out_tokens, out_transitions = tr.crop_pad_left(tokens, transitions, 25, "<pad>")
        assert len(out_tokens) == 25 and len(out_transitions) == 49
        real = [t for t in out_transitions if t != PAD]
        kept = min(len(words), 25)
        assert out_tokens[-kept:] == words[-kept:]
        # The sentence part (after the padding SHIFTs) is one valid tree over the kept words.
        assert tr.is_valid(real[25 - kept :], kept)


def test_node_spans():
    from_parse = tr.parse_to_transitions("( ( the cat ) ( sat down ) )")[1]
    assert tr.node_spans(from_parse + [tr.PAD]) == [
        (0, 0), (1, 1), (0, 1), (2, 2), (3, 3), (2, 3), (0, 3), (-1, -1),
    ]  # fmt: skip


def test_constituent_spans():
    S, R = tr.SHIFT, tr.REDUCE
    # ( ( the cat ) ( sat down ) )
    assert tr.constituent_spans([S, S, R, S, S, R, R]) == [(0, 2), (2, 4), (0, 4)]
    # An invalid sequence gives the spans of what it built.
    assert tr.constituent_spans([S, R, S, S, R]) == [(1, 3)]


# --- the fold ---------------------------------------------------------------------------------


def recursive_height(tree):
    return 0 if isinstance(tree, str) else 1 + max(map(recursive_height, tree))


def test_fold_builds_one_item_per_step_in_post_order():
    steps = []
    folded = tr.fold(
        [S, S, R, S, S, R, R],
        leaf=lambda word, step: steps.append(("leaf", word, step)) or "abcd"[word],
        node=lambda left, right, step: steps.append(("node", step)) or f"({left} {right})",
    )
    assert folded.stack == ["((a b) (c d))"] and folded.words == 4
    assert folded.pushed == ["a", "b", "(a b)", "c", "d", "(c d)", "((a b) (c d))"]
    assert steps == [
        ("leaf", 0, 0), ("leaf", 1, 1), ("node", 2), ("leaf", 2, 3), ("leaf", 3, 4),
        ("node", 5), ("node", 6),
    ]  # fmt: skip


def test_fold_of_a_1000_word_right_branching_tree_has_no_recursion_limit():
    transitions = tr.right_branching_transitions(1000)
    depth = tr.fold(transitions, lambda word, _: 0, lambda left, right, _: 1 + max(left, right))
    assert depth.stack == [999] and depth.pushed[-1] == 999
    tree = tr.transitions_to_tree([str(i) for i in range(1000)], transitions)
    assert tree[0] == "0" and tree[1][0] == "1"  # ( 0 ( 1 ( 2 ... ) ) )
    assert tr.node_spans(transitions)[-1] == (0, 999)
    assert len(tr.constituent_spans(transitions)) == 999


def test_fold_pad_steps_do_nothing():
    with_pad = tr.fold([S, PAD, S, R, PAD], lambda word, _: str(word), lambda a, b, _: a + b)
    assert with_pad.stack == ["01"] and with_pad.pushed == ["0", None, "1", "01", None]
    assert tr.node_spans([S, PAD, S, R]) == [(0, 0), (-1, -1), (1, 1), (0, 1)]
    with pytest.raises(tr.InvalidTransitionsError, match="unknown transition -1 at step 1"):
        tr.fold([S, PAD], lambda word, _: word, lambda a, b, _: a, allow_pad=False)


@pytest.mark.parametrize(
    "transitions,num_tokens,message,stack",
    [
        ([S, R, S], None, "REDUCE at step 1 with 1 item", ["0", "1"]),
        ([R, S, S, R], None, "REDUCE at step 0 with 0 item", ["01"]),
        ([S, S, S, R], 2, "SHIFT at step 2 with an empty buffer", ["01"]),
        ([S, 7, S, R], None, "unknown transition 7 at step 1", ["01"]),
    ],
)
def test_fold_invalid_steps_raise_or_are_skipped(transitions, num_tokens, message, stack):
    def run(skip):
        return tr.fold(
            transitions, lambda word, _: str(word), lambda a, b, _: a + b, num_tokens, skip
        )

    with pytest.raises(tr.InvalidTransitionsError, match=message):
        run(skip=False)
    skipped = run(skip=True)
    assert skipped.stack == stack
    assert sum(item is None for item in skipped.pushed) == 1  # the skipped step pushed nothing


def test_fold_leaves_a_forest_for_the_caller_to_judge():
    forest = tr.fold([S, S, S, R], lambda word, _: word, lambda a, b, _: (a, b))
    assert forest.stack == [0, (1, 2)]
    with pytest.raises(tr.InvalidTransitionsError, match="2 items left"):
        tr.check_transitions([S, S, S, R])


def test_folds_agree_with_the_recursive_trees_they_come_from():
    """Against trees built top-down: the tree, the spans and the height (the level-wise
    runner's expected number of levels, `testing.tree_height`) of random trees."""
    rng = random.Random(5)
    for _ in range(100):
        words = [str(i) for i in range(rng.randint(1, 40))]
        tree = random_tree(words, rng)
        _, transitions = tr.tree_to_transitions(tree)
        assert tr.transitions_to_tree(words, transitions) == tree
        assert tree_height(transitions) == recursive_height(tree)

        def spans(node, first):  # post-order (first, last + 1) of the constituents
            if isinstance(node, str):
                return [], first + 1
            left, middle = spans(node[0], first)
            right, end = spans(node[1], middle)
            return left + right + [(first, end)], end

        assert tr.constituent_spans(transitions) == spans(tree, 0)[0]
