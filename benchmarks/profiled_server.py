"""Run ``kraft ARGS...`` with cProfile ready but off; signals switch it on and off.

    python benchmarks/profiled_server.py OUT.prof server-start CONFIG [...]

SIGUSR1 starts profiling, SIGUSR2 stops it and writes the stats to ``OUT.prof`` (pstats format).
Why signals rather than ``python -m cProfile``: a whole-life profile is dominated by start-up and
idle waiting; ``benchmarks/bench_dataplane.py --profile`` wants only the seconds under load.

cProfile sees the thread that enabled it: the handlers run on the main thread, which is where
``kraft server-start`` runs its event loop (and the raft core, with the default ``raft.driver=loop``).
Nothing in ``src/`` knows about this file.
"""

from __future__ import annotations

import cProfile
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType

sys.path.append(str(Path(__file__).resolve().parent.parent / "src"))  # after PYTHONPATH (a compiled build)

from kraft.cli.main import main as kraft_main


def run(out: Path, argv: list[str]) -> int:
    # KRAFT_PROFILE_CPU=1: CPU time (time.process_time) instead of wall time, so that a socket write
    # that yields the core to the woken reader is not charged as work.
    profiler = (
        cProfile.Profile(time.process_time) if os.environ.get("KRAFT_PROFILE_CPU") else cProfile.Profile()
    )
    state = {"on": False}

    def start(_sig: int, _frame: FrameType | None) -> None:
        if not state["on"]:
            state["on"] = True
            profiler.enable()

    def stop(_sig: int, _frame: FrameType | None) -> None:
        if state["on"]:
            profiler.disable()
            state["on"] = False
            tmp = out.with_suffix(out.suffix + ".tmp")
            profiler.dump_stats(str(tmp))
            tmp.replace(out)  # whoever waits for OUT sees it whole

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    result = kraft_main(argv)
    return int(result or 0)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(run(Path(sys.argv[1]), sys.argv[2:]))
