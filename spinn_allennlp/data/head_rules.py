"""Dependency trees from binary constituency trees by a head-rule table.

The Child-Sum Tree-LSTM (Tai et al. 2015) runs on dependency trees; here they come from the
binary trees every task already has (SST's own trees, or a tree source's for raw text), the way
Collins (1999) turned the Penn Treebank into head-dependent pairs: in each constituent one
child is the *head*; the head word of every other child becomes a dependent of the head
child's head word. Which child heads is decided from the children's categories by a fixed
table. The trees here carry no phrase labels (SST's labels are sentiments; a tree source gives
bare brackets), so a constituent's category is projected from its head word's part of speech,
as Collins's table percolates heads: a noun heads a noun phrase, a verb a verb phrase, and so on
(:data:`WORD_CLASSES`). The table (:meth:`HeadRules.choose_head`), in order:

1. punctuation never heads: the other child does;
2. a coordinating conjunction never heads: the other child does;
3. determiners, possessives ('s) and complementizers (which, who, ...) never head a content
   phrase: the other child does;
4. an auxiliary (forms of be, have, do, modals) followed by a verb phrase is not the head, the
   verb is; a form of *be* followed by an adjective or noun phrase (a copula) is not the head,
   the predicate is (the result is a verb phrase) — Stanford's "semantic head" change to
   Collins's table (de Marneffe et al. 2006), so "is playing" and "is happy" are headed by
   "playing" and "happy", as in the Stanford dependencies Tai et al. used;
5. a bare preposition (or "to") followed by its object heads it and makes a prepositional
   phrase (Collins's PP rule; Stanford basic dependencies' prep -> pobj); followed by a verb
   phrase ("to go", "because it is", "while running") the verb heads and the result is a
   subordinate clause; prepositional phrases and subordinate clauses never head a content
   phrase;
6. otherwise the child of the higher-ranked category heads: verb > noun > adjective > adverb >
   other; between equal ones the left child heads verbs (Collins's VP rule: leftmost verb)
   and the right child everything else (the NP rule: rightmost noun; "very good").

Parts of speech come from :class:`PosLexicon`: each word's most frequent Penn Treebank tag in
SNLI's training parses (the labelled ``sentence1_parse``/``sentence2_parse`` of the bundled 1 %
subset, built by ``scripts/build_pos_lexicon.py``), and suffix and shape rules for other words.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

from spinn_core.transitions import check_transitions, fold

ROOT = -1
LEXICON_PATH = Path(__file__).parent / "resources" / "pos_lexicon.tsv"

# Coarse word classes (and the categories of constituents projected from them).
PUNCT, CONJ, DET, COMP, PREP, AUX, VERB, NOUN, ADJ, ADV, OTHER = (
    "PUNCT CONJ DET COMP PREP AUX VERB NOUN ADJ ADV OTHER".split()
)
PP, SBAR = "PP", "SBAR"  # categories only phrases have: prepositional phrase, subordinate clause

WORD_CLASSES: Dict[str, str] = {
    **dict.fromkeys([",", ".", ":", "``", "''", "-LRB-", "-RRB-", "#", "$", "HYPH", "NFP"], PUNCT),
    "CC": CONJ,
    **dict.fromkeys(["DT", "PDT", "PRP$", "POS", "WP$"], DET),
    **dict.fromkeys(["WDT", "WP", "WRB"], COMP),
    **dict.fromkeys(["IN", "TO"], PREP),
    **dict.fromkeys(["VB", "VBD", "VBG", "VBN", "VBP", "VBZ"], VERB),
    "MD": AUX,
    **dict.fromkeys(["NN", "NNS", "NNP", "NNPS", "PRP", "CD", "EX", "FW", "SYM", "LS"], NOUN),
    **dict.fromkeys(["JJ", "JJR", "JJS"], ADJ),
    **dict.fromkeys(["RB", "RBR", "RBS", "RP", "UH"], ADV),
}
BE = {"be", "is", "are", "was", "were", "been", "being", "am", "'m", "'re", "'s"}
AUXILIARIES = BE | {
    *("have", "has", "had", "having", "'ve", "'d"),
    *("do", "does", "did"),
}
# Rank of content categories (rule 6); everything else ranks below them.
RANK = {VERB: 5, AUX: 5, NOUN: 4, ADJ: 3, ADV: 2, OTHER: 1}
NEVER_HEAD = {PUNCT: 1, CONJ: 2, DET: 3, COMP: 3}  # rule number, for explanations

_PRONOUNS_BEFORE_IS = {"it", "he", "she", "that", "there", "here", "what", "who", "this", "where"}
_ADJECTIVE_SUFFIXES = ("ous", "ful", "ive", "able", "ible", "less", "ish", "ic", "al", "est")


class PosLexicon:
    """Part-of-speech tags by lexicon lookup: the tag a word (lowercased) had most often in the
    training parses, else suffix and shape rules (punctuation, numbers, -ly adverbs, -ing/-ed
    verbs, adjective suffixes, plural -s, capitalised names, nouns).

    # Parameters

    path : `Union[str, Path]`, optional (default = the bundled `resources/pos_lexicon.tsv`)
        Lines `word<TAB>tag`.
    """

    def __init__(self, path: Union[str, Path] = LEXICON_PATH) -> None:
        self.tags: Dict[str, str] = {}
        with open(path, encoding="utf-8") as lexicon:
            for line_number, line in enumerate(lexicon, start=1):
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 2:
                    raise ValueError(f"{path}:{line_number}: expected 'word<TAB>tag'")
                self.tags[parts[0]] = parts[1]

    def tag(self, word: str) -> str:
        lower = word.lower()
        if lower in self.tags:
            return self.tags[lower]
        if "-" in lower.strip("-") and lower.rsplit("-", 1)[-1] in self.tags:
            last = self.tags[lower.rsplit("-", 1)[-1]]
            return last if last.startswith(("NN", "VB")) else "JJ"
        if not any(character.isalnum() for character in word):
            return ":"
        if any(character.isdigit() for character in word):
            return "CD"
        if lower.endswith("ly"):
            return "RB"
        if lower.endswith("ing"):
            return "VBG"
        if lower.endswith("ed"):
            return "VBN"
        if lower.endswith(_ADJECTIVE_SUFFIXES) or "-" in lower:
            return "JJ"
        if word[0].isupper():
            return "NNP"
        if lower.endswith("s") and not lower.endswith("ss"):
            return "NNS"
        return "NN"

    def tag_sentence(self, words: Sequence[str]) -> List[str]:
        """Tags of a sentence's words: :meth:`tag`, except that "'s" after a pronoun ("it 's",
        "there 's") is the verb *is* (VBZ), not the possessive."""
        tags = [self.tag(word) for word in words]
        for position in range(1, len(words)):
            if words[position] == "'s" and words[position - 1].lower() in _PRONOUNS_BEFORE_IS:
                tags[position] = "VBZ"
        return tags

    def word_classes(self, words: Sequence[str]) -> List[str]:
        """The coarse class (:data:`WORD_CLASSES`) of each word; forms of be, have and do
        tagged as verbs are auxiliaries (AUX), which rule 4 may make dependents."""
        return [
            AUX
            if word.lower() in AUXILIARIES and tag.startswith("VB")
            else WORD_CLASSES.get(tag, OTHER)
            for word, tag in zip(words, self.tag_sentence(words))
        ]


@dataclass
class Constituent:
    head: int  # position of the head word
    category: str
    is_word: bool
    head_word: str = ""


@dataclass
class DependencyTree:
    """Each word's head (ROOT for the root) and the step of the constituency transitions that
    pushed its maximal projection (the largest constituent it heads: the word's subtree in the
    dependency tree spans exactly that constituent's words)."""

    heads: List[int]
    projections: List[int]


class HeadRules:
    """The head-rule table above, on binary trees given as tokens and SHIFT/REDUCE transitions.

    # Parameters

    lexicon : `PosLexicon`, optional (default = the bundled lexicon)
    """

    def __init__(self, lexicon: Optional[PosLexicon] = None) -> None:
        self.lexicon = lexicon or PosLexicon()

    def choose_head(self, left: Constituent, right: Constituent) -> Tuple[int, str]:
        """(0 if the left child heads else 1, the category of the parent)."""
        categories = (left.category, right.category)
        # Rules 1-3: punctuation, conjunctions, determiners and complementizers never head
        # (unless both children are of that kind).
        for rule in (1, 2, 3):
            kinds = [kind for kind, number in NEVER_HEAD.items() if number == rule]
            left_never, right_never = left.category in kinds, right.category in kinds
            if left_never != right_never:
                if left.category == COMP and right.category in (VERB, AUX):
                    return 1, SBAR  # "which is ...": a relative or subordinate clause
                side = 1 if left_never else 0
                return side, categories[side]
        # Rule 4: auxiliaries and copulas give way to the verb phrase or predicate they take.
        if left.category == AUX:
            copula = left.head_word.lower() in BE and right.category in (ADJ, NOUN)
            if right.category in (VERB, AUX) or copula:
                return 1, AUX if right.category == AUX else VERB
        # Rule 5: prepositions head their objects; PPs and clauses modify.
        if left.category == PREP and left.is_word:
            if right.category in (VERB, AUX):
                return 1, SBAR
            if right.category not in (PREP, PP, SBAR):
                return 0, PP
        modifiers = (PREP, PP, SBAR)
        if (left.category in modifiers) != (right.category in modifiers):
            side = 1 if left.category in modifiers else 0
            return side, categories[side]
        # Rule 6: rank, then direction.
        left_rank, right_rank = RANK.get(left.category, 0), RANK.get(right.category, 0)
        if left_rank != right_rank:
            side = 0 if left_rank > right_rank else 1
        else:
            side = 0 if left.category in (VERB, AUX, PP, SBAR, PREP, PUNCT) else 1
        return side, categories[side]

    def dependencies(self, tokens: Sequence[str], transitions: Sequence[int]) -> DependencyTree:
        """The dependency tree of the binary tree that ``transitions`` build over ``tokens``
        (PAD-free; raises ``InvalidTransitionsError`` for anything but one tree)."""
        check_transitions(transitions, len(tokens))
        heads = [ROOT] * len(tokens)
        projections = [0] * len(tokens)
        classes = self.lexicon.word_classes(tokens)

        # Items: (constituent, step that pushed it). Joining two makes the non-head child's
        # head word a dependent of the head child's, whose maximal projection ends there.
        def word(position: int, step: int) -> Tuple[Constituent, int]:
            return Constituent(position, classes[position], True, tokens[position]), step

        def join(
            left: Tuple[Constituent, int], right: Tuple[Constituent, int], step: int
        ) -> Tuple[Constituent, int]:
            side, category = self.choose_head(left[0], right[0])
            (head, _), (dependent, dependent_step) = (left, right) if side == 0 else (right, left)
            heads[dependent.head] = head.head
            projections[dependent.head] = dependent_step
            return Constituent(head.head, category, False, head.head_word), step

        root, root_step = fold(transitions, word, join).stack[0]
        projections[root.head] = root_step
        return DependencyTree(heads, projections)
