"""``python -m fabriclab ARGS...``: the ``fabriclab`` command line, as the
console script and the binary (see ``fabriclab._cli``)."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
