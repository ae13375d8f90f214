"""Simulator throughput: simulated events per wall second and simulated seconds per wall second.

Runs the 5-voter ``message-loss`` scenario (loss, duplication, reordering, partitions, slow disks;
until 2026-11-24 this was ``flaky-network``, whose lost messages are now retransmitted)
for a few seeds with every invariant checked after every event, and prints the figures.

    PYTHONPATH=src python benchmarks/bench_sim.py [--seeds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from kraft.sim.scenarios import build_world


def bench(seeds: int) -> dict[str, float]:
    events = 0
    virtual_ms = 0
    wall_s = 0.0
    cpu_s = 0.0
    for seed in range(1, seeds + 1):
        world = build_world("message-loss", seed, voters=5)
        started = time.perf_counter()
        cpu_started = time.process_time()
        world.run()
        cpu_s += time.process_time() - cpu_started
        wall_s += time.perf_counter() - started
        if world.violations:
            raise SystemExit(f"seed {seed} violated {world.violations[0]}")
        events += world.events
        virtual_ms += world.now_ms
    return {
        "seeds": seeds,
        "events": events,
        "virtual_s": virtual_ms / 1000,
        "wall_s": round(wall_s, 3),
        # CPU time is the steadier figure when other processes share the cores.
        "cpu_s": round(cpu_s, 3),
        "events_per_s": round(events / wall_s),
        "virtual_s_per_wall_s": round(virtual_ms / 1000 / wall_s, 1),
        "events_per_cpu_s": round(events / cpu_s),
        "virtual_s_per_cpu_s": round(virtual_ms / 1000 / cpu_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = bench(args.seeds)
    if args.json:
        print(json.dumps(figures))
    else:
        print(
            f"message-loss, 5 voters, {figures['seeds']} seeds: {figures['events']} events, "
            f"{figures['virtual_s']} simulated s in {figures['wall_s']} wall s -> "
            f"{figures['events_per_s']} events/s, {figures['virtual_s_per_wall_s']} simulated s per wall s "
            f"(CPU {figures['cpu_s']} s: {figures['events_per_cpu_s']} events/s, "
            f"{figures['virtual_s_per_cpu_s']} simulated s per CPU s)"
        )


if __name__ == "__main__":
    main()
