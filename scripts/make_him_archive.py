"""Combines trained NLI archives into one HIM archive (Chen et al. 2017: models trained apart,
label probabilities averaged), ready for `allennlp evaluate` and `allennlp predict`.

.venv/bin/python scripts/make_him_archive.py esim=runs/esim/model.tar.gz \\
    tree=runs/tree_esim/model.tar.gz -o runs/him/model.tar.gz
"""

import argparse
from pathlib import Path

import spinn_allennlp.plugin  # noqa: F401  (registers the plugin's classes)
from spinn_allennlp.pair_classification.models.him import archive_him


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("members", nargs="+", help="name=path/to/model.tar.gz, one per member")
    parser.add_argument("-o", "--output", required=True, help="the HIM archive to write")
    parser.add_argument("--reader-from", help="member whose dataset reader HIM uses")
    args = parser.parse_args()
    members = {}
    for member in args.members:
        name, sep, path = member.partition("=")
        if not sep or not name or not path:
            parser.error(f"expected name=path, got {member!r}")
        members[name] = Path(path)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    archive_him(members, args.output, reader_from=args.reader_from)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
