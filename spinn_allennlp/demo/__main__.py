"""`python -m spinn_allennlp.demo model.tar.gz [--port 8000] [--tree-source benepar]`."""

import sys

from spinn_allennlp.demo.server import main

if __name__ == "__main__":
    sys.exit(main())
