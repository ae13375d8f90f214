"""Simulation campaign benchmark: seeds/s of ``kraft sim campaign`` on Spark against a local process
pool (what ``kraft sim sweep --workers K`` runs) on the same seeds, in the same run.

    python benchmarks/bench_campaign.py [--scenarios steady,partition-rejoin] [--seeds 1..100]
        [--master local[2]] [--workers 2] [--partitions-per-core 3] [--quick] [--json]

Prints, next to the baseline:

* pool: a ``multiprocessing`` spawn pool of ``--workers`` processes mapping
  ``kraft.sim.runner._run_args`` over the runs one at a time (``kraft sim sweep --workers K``),
  pool start-up included: runs/s;
* spark: the planned units on ``--master`` (``kraft.spark.campaign.execute``: the Spark job alone,
  the session already started), runs/s and the ratio to the pool: first as a campaign runs them (the
  session's first job: Python workers start, kraft is imported, the JVM is cold), then the same job
  again (warm: what each further job, or a long campaign, sees); then the Parquet write;
* the session's start-up time, reported apart (a campaign pays it once);
* that both gave the same trace hash for every run.

Each run is Pre-Vote on and off unless ``--prevote-only``. ``--quick``: ``steady`` seeds 1..20,
Pre-Vote on only (20 runs). CPU-bound; wall times move with whatever else shares the cores.
Reported, not gated.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent / "src"))  # after PYTHONPATH (a compiled build)

from kraft.sim.command import parse_seeds as _parse_seeds
from kraft.sim.runner import _run_args
from kraft.spark.campaign import execute, expand_scenario_list, plan_units, write_runs


def bench_pool(
    jobs: Sequence[tuple[str, int, int | None, bool]], workers: int
) -> tuple[float, dict[Any, str]]:
    started = time.perf_counter()
    hashes = {}
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for r in pool.imap_unordered(_run_args, jobs, chunksize=1):
            hashes[(r["scenario"], r["pre_vote"], r["seed"])] = r["trace_hash"]
    return time.perf_counter() - started, hashes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", default="steady,partition-rejoin")
    ap.add_argument("--seeds", default="1..100")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--workers", type=int, default=2, help="processes of the baseline pool")
    ap.add_argument("--partitions-per-core", type=int, default=3)
    ap.add_argument("--prevote-only", action="store_true", help="only Pre-Vote on (not both ways)")
    ap.add_argument("--quick", action="store_true", help="steady seeds 1..20, Pre-Vote on")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.scenarios, args.seeds, args.prevote_only = "steady", "1..20", True
    scenarios = expand_scenario_list(args.scenarios)
    seeds = _parse_seeds(args.seeds)
    pre_votes = [True] if args.prevote_only else [True, False]
    jobs = [(s, seed, None, p) for s in scenarios for p in pre_votes for seed in seeds]
    report: dict[str, Any] = {
        "scenarios": scenarios,
        "seeds": args.seeds,
        "pre_vote": pre_votes,
        "runs": len(jobs),
    }

    pool_s, pool_hashes = bench_pool(jobs, args.workers)
    report["pool"] = {"workers": args.workers, "seconds": pool_s, "runs_per_s": len(jobs) / pool_s}

    from kraft.spark.session import kraft_session

    started = time.perf_counter()
    spark = kraft_session(args.master, "kraft-bench-campaign")
    spark.sparkContext.setLogLevel("ERROR")
    session_s = time.perf_counter() - started
    try:
        parallelism = spark.sparkContext.defaultParallelism
        bins = plan_units(scenarios, seeds, [None], pre_votes, args.partitions_per_core * parallelism)
        cold = execute(spark, bins, progress=False)  # as a campaign runs: the session's first job
        warm = execute(spark, bins, progress=False)  # the same again: Python workers already up
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            write_runs(spark, cold.rows, Path(tmp) / "runs.parquet")
            write_s = time.perf_counter() - started
    finally:
        spark.stop()
    pool_rate = report["pool"]["runs_per_s"]
    report["spark"] = {
        "master": args.master,
        "default_parallelism": parallelism,
        "partitions": cold.partitions,
        "tasks": cold.tasks,
        "seconds": cold.wall_s,
        "runs_per_s": len(cold.rows) / cold.wall_s,
        "vs_pool": len(cold.rows) / cold.wall_s / pool_rate,
        "warm_seconds": warm.wall_s,
        "warm_runs_per_s": len(warm.rows) / warm.wall_s,
        "warm_vs_pool": len(warm.rows) / warm.wall_s / pool_rate,
        "parquet_write_s": write_s,
        "session_start_s": session_s,
    }
    report["same_trace_hashes"] = all(
        {(r["scenario"], r["pre_vote"], r["seed"]): r["trace_hash"] for r in done.rows} == pool_hashes
        for done in (cold, warm)
    )
    report["violations"] = sum(r["violations"] for r in cold.rows)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        p, s = report["pool"], report["spark"]
        print(f"{report['runs']} runs: {', '.join(scenarios)}, seeds {args.seeds}, pre-vote {pre_votes}")
        print(
            f"  pool of {p['workers']} processes: {p['seconds']:.1f} s, "
            f"{p['runs_per_s']:.2f} runs/s (the baseline)"
        )
        print(
            f"  spark {s['master']}: {s['partitions']} partitions, {s['tasks']} tasks: {s['seconds']:.1f} s, "
            f"{s['runs_per_s']:.2f} runs/s ({s['vs_pool']:.2f} of the pool)"
        )
        print(
            f"  the same job again (workers up): {s['warm_seconds']:.1f} s, "
            f"{s['warm_runs_per_s']:.2f} runs/s "
            f"({s['warm_vs_pool']:.2f} of the pool)"
        )
        print(
            f"  Parquet write {s['parquet_write_s']:.1f} s; session start {s['session_start_s']:.1f} s "
            "(once per campaign)"
        )
        print(f"  same trace hashes: {report['same_trace_hashes']}; violations: {report['violations']}")
    return 0 if report["same_trace_hashes"] and not report["violations"] else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
