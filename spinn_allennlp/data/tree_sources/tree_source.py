"""Where a sentence's binary tree comes from when the corpus has none (raw text)."""

from typing import List, Sequence

from allennlp.common import Registrable

from spinn_allennlp.core.transitions import (
    balanced_transitions,
    left_branching_transitions,
    right_branching_transitions,
)


class TreeSource(Registrable):
    """Gives a binary tree, as SHIFT (0) / REDUCE (1) transitions, for a tokenized sentence.

    Readers use a tree source for sentences without a binary parse; predictors for raw text.
    `transitions_batch` takes many sentences at once (a parser is faster in batches);
    subclasses implement one or both. Every sequence returned must build one binary tree over
    all the sentence's tokens (`2 * len(tokens) - 1` steps; none for no tokens). `name` says in
    outputs which source made a tree.
    """

    default_implementation = "balanced"

    @property
    def name(self) -> str:
        return type(self).__name__

    def transitions(self, tokens: Sequence[str]) -> List[int]:
        return self.transitions_batch([tokens])[0]

    def transitions_batch(self, sentences: Sequence[Sequence[str]]) -> List[List[int]]:
        return [self.transitions(tokens) for tokens in sentences]


@TreeSource.register("balanced")
class BalancedTrees(TreeSource):
    """The balanced binary tree over the words (the left half gets the extra word): the SPINN
    encoder's own default when it has neither transitions nor a parser.

    Registered as a `TreeSource` with name "balanced".
    """

    name = "balanced"

    def transitions(self, tokens: Sequence[str]) -> List[int]:
        return balanced_transitions(len(tokens))


@TreeSource.register("left_branching")
class LeftBranchingTrees(TreeSource):
    """`( ( ( a b ) c ) d )`: each word joins everything before it.

    Registered as a `TreeSource` with name "left_branching".
    """

    name = "left_branching"

    def transitions(self, tokens: Sequence[str]) -> List[int]:
        return left_branching_transitions(len(tokens))


@TreeSource.register("right_branching")
class RightBranchingTrees(TreeSource):
    """`( a ( b ( c d ) ) )`: each word joins everything after it (English is mostly
    right-branching, so this baseline is stronger than the left-branching one).

    Registered as a `TreeSource` with name "right_branching".
    """

    name = "right_branching"

    def transitions(self, tokens: Sequence[str]) -> List[int]:
        return right_branching_transitions(len(tokens))
