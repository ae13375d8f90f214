"""Simulator throughput: simulated events per wall second and simulated seconds per wall second.

Runs the 5-voter ``message-loss`` scenario (loss, duplication, reordering, partitions, slow disks;
until 2026-11-24 this was ``flaky-network``, whose lost messages are now retransmitted)
for a few seeds with every invariant checked after every event, and prints the figures, beside a
baseline from the same run (a bare discrete-event loop) and the same seeds without the checker.

    PYTHONPATH=src python benchmarks/bench_sim.py [--seeds 5] [--json]
"""

from __future__ import annotations

import argparse
import heapq
import json
import time

from kraft.sim.scenarios import build_world


def bare_event_loop_per_s(events: int = 300_000) -> float:
    """Baseline measured in the same run: a discrete-event loop with nothing in it (a heap of
    (time, seq, kind, a, b) events like the world's, each event pushing the next), in events per
    CPU second. The ratio to it moves less with the machine's speed than the raw figure does."""
    queue: list[tuple[int, int, int, int, int]] = [(0, 0, 0, 0, 0)]
    push, pop = heapq.heappush, heapq.heappop
    started = time.process_time()
    for seq in range(1, events + 1):
        at_ms, _seq, kind, a, b = pop(queue)
        push(queue, (at_ms + (seq & 7), seq, kind, a, b))
    return events / (time.process_time() - started)


def bench(seeds: int, *, checker: bool = True) -> dict[str, float]:
    events = 0
    virtual_ms = 0
    wall_s = 0.0
    cpu_s = 0.0
    for seed in range(1, seeds + 1):
        world = build_world("message-loss", seed, voters=5)
        if not checker:  # the core and the world alone: how much of the time the invariants take
            world.checker.after_event = lambda *_a, **_k: None  # type: ignore[method-assign]
            world.checker.after_idle_event = lambda: None  # type: ignore[method-assign]
        started = time.perf_counter()
        cpu_started = time.process_time()
        world.run()
        cpu_s += time.process_time() - cpu_started
        wall_s += time.perf_counter() - started
        if checker and world.violations:  # (without it, its liveness deadlines see no commits)
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
    baseline = bare_event_loop_per_s()
    figures = bench(args.seeds)
    unchecked = bench(args.seeds, checker=False)
    figures["bare_event_loop_per_cpu_s"] = round(baseline)
    figures["ratio_to_bare_loop"] = round(figures["events_per_cpu_s"] / baseline, 4)
    figures["events_per_cpu_s_without_checker"] = unchecked["events_per_cpu_s"]
    figures["checker_share_of_cpu"] = round(1 - unchecked["cpu_s"] / figures["cpu_s"], 3)
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
        print(
            f"baseline, a bare event loop in the same run: {figures['bare_event_loop_per_cpu_s']} events "
            f"per CPU s; ratio {figures['ratio_to_bare_loop']}"
        )
        print(
            f"without the invariant checker: {figures['events_per_cpu_s_without_checker']} events per CPU s "
            f"(the checker takes {figures['checker_share_of_cpu']:.0%} of the CPU)"
        )


if __name__ == "__main__":
    main()
