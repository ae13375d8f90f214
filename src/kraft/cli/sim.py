"""``kraft sim``: run the deterministic fault-injecting simulator.

    kraft sim run --scenario NAME --seed N [--voters 1..9] [--observers K] [--duration-ms T]
                  [--no-prevote] [--json]
    kraft sim sweep --scenario NAME|all|raft|controller --seeds A..B [--workers K] [--no-prevote]
                    [--voters N] [--json]
    kraft sim campaign --scenarios LIST --seeds A..B --out OUT [--voters 3,5] [--compare-prevote]
                       [--master URL] [--partitions-per-core K]
    kraft sim list

``run``, ``sweep`` and ``list`` are the simulator's own command line (``kraft.sim.command``, also
``python -m kraft.sim``). ``campaign`` runs the seeds on Spark (``kraft[spark]``,
``kraft.spark.campaign``), writes ``OUT/runs.parquet``, ``OUT/summary.json``, ``OUT/summary.md`` and
plots, and exits 1 on any violation. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from kraft.sim.command import build_parser, parse_seeds, run_command


def _build_parser() -> argparse.ArgumentParser:
    parser, sub = build_parser("kraft sim")
    campaign = sub.add_parser("campaign", help="run many seeds on Spark: Parquet, summary and plots")
    campaign.add_argument(
        "--scenarios",
        required=True,
        help="comma-separated scenario names and groups (all, raft, controller, data)",
    )
    campaign.add_argument("--seeds", type=parse_seeds, required=True, help="A..B inclusive")
    campaign.add_argument("--voters", default=None, help="comma list of voter counts, e.g. 3,5")
    prevote = campaign.add_mutually_exclusive_group()
    prevote.add_argument(
        "--compare-prevote",
        "--no-prevote-too",
        dest="compare_prevote",
        action="store_true",
        help="also run every seed with Pre-Vote off and compare",
    )
    prevote.add_argument("--no-prevote", action="store_true", help="only with Pre-Vote off")
    campaign.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    campaign.add_argument("--out", required=True, help="output directory")
    campaign.add_argument("--partitions-per-core", type=int, default=3)

    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    args = _build_parser().parse_args(argv)
    if args.command == "campaign":
        from kraft.spark.campaign import main as campaign_main  # pyspark only for this command

        return campaign_main(args, out)
    return run_command(args, out)
