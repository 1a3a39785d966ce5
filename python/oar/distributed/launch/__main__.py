"""``python -m oar.distributed.launch``: see the package's docstring or ``--help``."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
