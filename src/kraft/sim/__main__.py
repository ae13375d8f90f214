"""``python -m kraft.sim [run|sweep|list] ...``: the simulator's own command line (``kraft.sim.command``;
``kraft sim`` is the same, plus ``campaign``). ``run`` is the default."""

from __future__ import annotations

import sys

from kraft.sim.command import main

if __name__ == "__main__":
    sys.exit(main())
