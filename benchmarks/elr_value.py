"""What KIP-966's Eligible Leader Replicas save, measured in the simulator.

Runs the scenario pair ``data-last-replica-standing`` (ELR on) and
``data-last-replica-standing-no-elr`` (``eligible.leader.replicas.version`` 0) over the same seeds,
each to its end (violations counted, not stopping), and reports per side: runs that lost
acknowledged records, the records lost, and the longest time without an acknowledged write.

The case (RF 3, min ISR 2): both followers fall behind one after the other, the ISR shrinks to the
leader, the high watermark freezes (strict min ISR), then the leader loses power and its unflushed
tail. With ELR the follower that left the ISR below min ISR is elected and nothing acknowledged is
lost; without it the leader comes back as the last ISR member with an empty log and is elected.

    .venv/bin/python benchmarks/elr_value.py --seeds 1..1000 --workers 2 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from tqdm import tqdm

from kraft.sim.data import DataWorld
from kraft.sim.data_scenarios import DATA_SCENARIOS

PAIR = ("data-last-replica-standing", "data-last-replica-standing-no-elr")


def run_one(args: tuple[str, int]) -> dict[str, Any]:
    logging.disable(logging.CRITICAL)
    name, seed = args
    scenario = DATA_SCENARIOS[name]
    assert scenario.make_world is not None
    world = scenario.make_world(
        seed=seed,
        voters=scenario.voters,
        observers=scenario.observers,
        timing=scenario.timing,
        pre_vote=True,
        end_ms=scenario.duration_ms,
        stop_on_violation=False,
    )
    assert isinstance(world, DataWorld)
    world.extra["scenario"] = name
    world.start()
    scenario.setup(world)
    world.run()
    data = world.extra.get("data", {})
    return {
        "scenario": name,
        "seed": seed,
        "lost_records": data.get("lost_records", 0),
        "acked_records": data.get("acked_records", 0),
        "longest_unavailable_ms": data.get("longest_unavailable_ms", 0),
        "other_violations": sorted({v.invariant for v in world.violations} - {"AckedRecordKept"}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="1..200", help="A..B inclusive")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", help="write every run and the summary here")
    args = parser.parse_args(argv)
    low, high = (int(x) for x in args.seeds.split(".."))
    jobs = [(name, seed) for seed in range(low, high + 1) for name in PAIR]
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for row in tqdm(pool.map(run_one, jobs, chunksize=2), total=len(jobs), desc="elr pair", unit="run"):
            rows.append(row)
    summary = {}
    print(f"{'side':<36}{'runs':>6}{'runs losing':>13}{'records lost':>14}{'unavail p50':>13}{'max':>9}")
    for name in PAIR:
        side = [r for r in rows if r["scenario"] == name]
        unavailable = [r["longest_unavailable_ms"] for r in side]
        summary[name] = {
            "runs": len(side),
            "runs_losing_acked_records": sum(1 for r in side if r["lost_records"]),
            "acked_records_lost": sum(r["lost_records"] for r in side),
            "acked_records": sum(r["acked_records"] for r in side),
            "longest_unavailable_ms_p50": statistics.median(unavailable) if unavailable else 0,
            "longest_unavailable_ms_max": max(unavailable, default=0),
            "runs_with_other_violations": sum(1 for r in side if r["other_violations"]),
        }
        s = summary[name]
        print(
            f"{name:<36}{s['runs']:>6}{s['runs_losing_acked_records']:>13}{s['acked_records_lost']:>14}"
            f"{s['longest_unavailable_ms_p50']:>11.0f}ms{s['longest_unavailable_ms_max']:>7}ms"
        )
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "runs": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
