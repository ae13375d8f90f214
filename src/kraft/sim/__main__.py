"""``python -m kraft.sim [run|sweep|list] ...``: the same as ``kraft sim`` (``run`` is the default)."""

from __future__ import annotations

import sys

from kraft.cli.sim import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] not in ("run", "sweep", "list", "-h", "--help"):
        args = ["run", *args]
    sys.exit(main(args))
