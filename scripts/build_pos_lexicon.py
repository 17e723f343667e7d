"""Builds the part-of-speech lexicon the head rules use (spinn_allennlp/data/head_rules.py):
each word's most frequent Penn Treebank tag in SNLI's labelled training parses
(`sentence1_parse`, `sentence2_parse` of the bundled 1 % train subset), lowercased; ties go to
the alphabetically first tag. Then reports the tagger's accuracy (lexicon + the fallback rules
for unknown words) on the dev parses, which are not used for building.

    .venv/bin/python scripts/build_pos_lexicon.py \
        --train data/snli/snli_1.0_train_0.01.jsonl.gz --dev data/snli/snli_1.0_dev.jsonl.gz \
        --out spinn_allennlp/data/resources/pos_lexicon.tsv
"""

import argparse
import gzip
import json
from collections import Counter, defaultdict
from typing import DefaultDict, Iterator, Tuple

from spinn_allennlp.data.head_rules import PosLexicon
from spinn_allennlp.data.labeled_trees import parse_labeled_tree


def tagged_words(path: str) -> Iterator[Tuple[str, str]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            example = json.loads(line)
            for key in ("sentence1_parse", "sentence2_parse"):
                for leaf in parse_labeled_tree(example[key]).leaves():
                    assert leaf.word is not None
                    yield leaf.word, leaf.label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", required=True)
    parser.add_argument("--dev", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    counts: DefaultDict[str, Counter] = defaultdict(Counter)
    for word, tag in tagged_words(args.train):
        counts[word.lower()][tag] += 1
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(f"# most frequent tag per lowercased word in {args.train.split('/')[-1]}\n")
        for word in sorted(counts):
            best = max(sorted(counts[word]), key=lambda tag: counts[word][tag])
            out.write(f"{word}\t{best}\n")

    lexicon = PosLexicon(args.out)
    known = Counter()
    correct = Counter()
    for word, tag in tagged_words(args.dev):
        kind = "known" if word.lower() in lexicon.tags else "unknown"
        known[kind] += 1
        correct[kind] += lexicon.tag(word) == tag
    total = sum(known.values())
    print(f"{len(counts)} words in the lexicon")
    print(f"dev tag accuracy: {sum(correct.values()) / total:.4f} over {total} tokens")
    for kind in ("known", "unknown"):
        print(f"  {kind}: {correct[kind] / max(1, known[kind]):.4f} over {known[kind]} tokens")


if __name__ == "__main__":
    main()
