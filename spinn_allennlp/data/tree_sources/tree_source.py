"""Where a sentence's binary tree comes from when the corpus has none (raw text)."""

import logging
from typing import List, Sequence, Union

from allennlp.common import Registrable

from spinn_core.transitions import (
    InvalidTransitionsError,
    balanced_transitions,
    check_transitions,
    left_branching_transitions,
    right_branching_transitions,
)

logger = logging.getLogger(__name__)


NO_TREE = "no tree from the tree source"
INVALID_TREE = "invalid tree from the tree source"


class TreeSourceError(ValueError):
    """A tree source has no tree for one sentence (too long for the parser, a word it cannot
    read, not in a gold table, the parser broke on it, or it gave an invalid tree); the other
    sentences go on. ``reason`` is the short category a reader counts skips under."""

    def __init__(self, message: str, reason: str = NO_TREE) -> None:
        super().__init__(message)
        self.reason = reason


class TreeSource(Registrable):
    """Gives a binary tree, as SHIFT (0) / REDUCE (1) transitions, for a tokenized sentence.

    Readers use a tree source for sentences without a binary parse; predictors for raw text.
    `transitions_batch` takes many sentences at once (a parser is faster in batches);
    subclasses implement one or both. Every sequence returned must build one binary tree over
    all the sentence's tokens (`2 * len(tokens) - 1` steps; none for no tokens). A sentence the
    source can't give a tree raises `TreeSourceError`. `name` says in outputs which source made
    a tree.

    Tokens are PTB tokens as readers make them (`-LRB-`, ``` `` ```): a source that reads words
    (a parser) unescapes them itself.

    Sources: "balanced" (the default), "left_branching", "right_branching" (baselines), "gold"
    (the corpus's binary parse), "benepar" (a benepar parser's trees, binarized), "spinn" (the
    parser of a trained full SPINN).
    """

    default_implementation = "balanced"

    @property
    def name(self) -> str:
        return type(self).__name__

    def transitions(self, tokens: Sequence[str]) -> List[int]:
        return self.transitions_batch([tokens])[0]

    def transitions_batch(self, sentences: Sequence[Sequence[str]]) -> List[List[int]]:
        return [self.transitions(tokens) for tokens in sentences]

    def transitions_or_errors(
        self, sentences: Sequence[Sequence[str]]
    ) -> List[Union[List[int], TreeSourceError]]:
        """Each sentence's transitions, or the `TreeSourceError` saying why it has none.

        The whole batch goes to `transitions_batch` first; when that fails, one sentence at a
        time, so one sentence the parser can't handle costs only its own tree. Every result is
        checked: transitions that don't build one binary tree over the sentence's tokens become
        an error too (a source's bug must not reach a model as a wrong tree).
        """
        try:
            results: List[Union[List[int], TreeSourceError]] = list(
                self.transitions_batch(sentences)
            )
        except Exception as error:  # a parser may fail in any way: retry one by one
            if len(sentences) <= 1:
                results = [_as_error(self.name, error)]
            else:
                logger.warning(
                    "%s failed on a batch of %d sentences (%s); parsing one at a time",
                    self.name,
                    len(sentences),
                    error,
                )
                results = [self.transitions_or_errors([tokens])[0] for tokens in sentences]
        return [_checked(self.name, tokens, result) for tokens, result in zip(sentences, results)]


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


def _as_error(name: str, error: Exception) -> TreeSourceError:
    if isinstance(error, TreeSourceError):
        return error
    return TreeSourceError(f"{name} failed: {type(error).__name__}: {error}")


def _checked(
    name: str, tokens: Sequence[str], result: Union[List[int], TreeSourceError]
) -> Union[List[int], TreeSourceError]:
    if isinstance(result, TreeSourceError):
        return result
    transitions = [int(t) for t in result]
    if not tokens:
        if transitions:
            return TreeSourceError(f"{name} gave {transitions} for no words", INVALID_TREE)
        return transitions
    try:
        check_transitions(transitions, len(tokens))
    except InvalidTransitionsError as error:
        return TreeSourceError(
            f"{name} gave {transitions} for {len(tokens)} words: {error}", INVALID_TREE
        )
    return transitions
