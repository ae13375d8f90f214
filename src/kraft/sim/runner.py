"""Run one seed of one scenario and summarise it; sweep many seeds (optionally in processes).

``run_seed`` returns a plain JSON-able dict (the CLI's ``--json`` output). Field meanings:

* ``elections``: binding elections started (distinct (node, epoch) seen as Candidate);
  ``prospective_rounds``: entries into Prospective (pre-vote rounds, KIP-996).
* ``leader_changes``: leaders elected after the first (distinct leader epochs - 1).
* ``high_watermark``: the end of the committed prefix (largest HW any node reached);
  ``committed_records``: data records in it, as counted by the state machines.
* ``time_to_first_leader_ms``: virtual time until a node was first seen as leader.
* ``unavailable_ms``: the sum of the commit stalls longer than ``stall_threshold_ms`` (250 ms:
  ten client append intervals), start-up included: time in which no leader could commit.
* ``events``: handled events (polls, deliveries, actions); each one was followed by every check.
* ``messages``: network counters (``kraft.sim.network.NetworkStats``); ``refused`` and ``reset``
  count the error answers the world made up for requests whose connection failed.
* ``controller`` (controller scenarios only): ``kraft.sim.controller_invariants.ControllerFigures``
  plus broker figures: partition elections, ELR elections, fenced brokers, snapshots, ...
* ``data`` (data scenarios only): acknowledged, consumed and lost records (``lost_records``: reported
  as AckedRecordKept), ``acked_lost_to_power_loss`` (acknowledged records every replica that held
  them lost to power losses: Kafka's durability model with its default flush, counted, not a
  violation) with ``acked_lost_to_power_loss_partitions``, ``read_lost_to_power_loss`` (the same
  for records a consumer read whose acknowledgement never came), power losses, ...
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kraft.sim.scenarios import build_world, scenario_group

# Controller figures (``controller`` in a run's JSON) a sweep adds up over its seeds.
CONTROLLER_TOTALS = (
    "partition_elections",
    "elr_elections",
    "last_known_leader_elections",
    "fenced_brokers",
    "unfenced_brokers",
    "controlled_shutdowns",
    "unclean_registrations",
    "topics_created",
    "topics_deleted",
    "activations",
    "snapshots_written",
    "snapshot_loads",
    "image_checks",
    "deep_checks",
    "unclean_recovery_elections",
)
# Data-plane figures (``data`` in a run's JSON, ``kraft.sim.data``) a sweep adds up over its seeds.
DATA_TOTALS = (
    "acked_records",
    "lost_records",
    "acked_lost_to_power_loss",
    "read_lost_to_power_loss",
    "power_losses",
)


def reproduce_command(scenario: str, seed: int, *, pre_vote: bool = True, voters: int | None = None) -> str:
    parts = ["kraft sim run", f"--scenario {scenario}", f"--seed {seed}"]
    if voters is not None:
        parts.append(f"--voters {voters}")
    if not pre_vote:
        parts.append("--no-prevote")
    return " ".join(parts)


def run_seed(
    scenario: str,
    seed: int,
    *,
    voters: int | None = None,
    observers: int | None = None,
    duration_ms: int | None = None,
    pre_vote: bool = True,
) -> dict[str, Any]:
    started = time.perf_counter()
    world = build_world(
        scenario, seed, voters=voters, observers=observers, duration_ms=duration_ms, pre_vote=pre_vote
    )
    world.run()
    wall_s = time.perf_counter() - started
    checker = world.checker
    figures = checker.figures
    result: dict[str, Any] = {
        "scenario": scenario,
        "seed": seed,
        "pre_vote": pre_vote,
        "voters": len(world.voter_ids),
        "observers": len(world.observer_ids),
        "duration_ms": world.end_ms,
        "violations": [v.as_dict() for v in world.violations],
        "elections": figures.elections,
        "prospective_rounds": figures.prospective_rounds,
        "max_epoch": figures.max_epoch,
        "leader_changes": max(0, len(checker.leaders_by_epoch) - 1),
        "high_watermark": checker.committed_end,
        "committed_records": world.ledger.max_count,
        "time_to_first_leader_ms": figures.first_leader_ms,
        "unavailable_ms": figures.unavailable_ms,
        "events": world.events,
        "virtual_ms": world.now_ms,
        "wall_s": round(wall_s, 3),
        "crashes": world.crashes,
        "snapshots_created": world.snapshots_created,
        "appended_records": world.appends,
        "messages": {
            "sent": world.network.stats.sent,
            "delivered": world.network.stats.delivered,
            "dropped_partition": world.network.stats.dropped_partition,
            "dropped_loss": world.network.stats.dropped_loss,
            "dropped_dead": world.network.stats.dropped_dead,
            "dropped_endpoint": world.network.stats.dropped_endpoint,
            "duplicated": world.network.stats.duplicated,
            "refused": world.network.stats.refused,
            "reset": world.network.stats.reset,
        },
        "trace_hash": world.trace_hash,
        "reproduce": reproduce_command(scenario, seed, pre_vote=pre_vote, voters=voters),
    }
    for key, value in world.extra.items():
        if key != "scenario":
            result[key] = value
    return result


def _run_args(args: tuple[str, int, int | None, bool]) -> dict[str, Any]:
    scenario, seed, voters, pre_vote = args
    return run_seed(scenario, seed, voters=voters, pre_vote=pre_vote)


def expand_scenarios(name: str) -> list[str]:
    """``all``, ``raft`` (the raft scenarios), ``controller`` (the controller ones) or one name."""
    return scenario_group(name)


def percentile(values: list[int], q: float) -> int:
    """Nearest-rank percentile (``q`` in [0, 100]) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 100)))  # ceil(q/100 * n)
    return ordered[min(rank, len(ordered)) - 1]


def summarise(results: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per scenario: seeds, failing seeds and the figures of the sweep table."""
    by_scenario: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_scenario.setdefault(r["scenario"], []).append(r)
    table: dict[str, dict[str, Any]] = {}
    for scenario, rs in by_scenario.items():
        epochs = [r["max_epoch"] for r in rs]
        unavailable = [r["unavailable_ms"] for r in rs]
        row: dict[str, Any] = {
            "seeds": len(rs),
            "failing_seeds": sorted(r["seed"] for r in rs if r["violations"]),
            "violations": sum(len(r["violations"]) for r in rs),
            "mean_max_epoch": round(sum(epochs) / len(rs), 2),
            "max_epoch": max(epochs),
            "mean_elections": round(sum(r["elections"] for r in rs) / len(rs), 2),
            "mean_leader_changes": round(sum(r["leader_changes"] for r in rs) / len(rs), 2),
            "unavailable_ms_p50": percentile(unavailable, 50),
            "unavailable_ms_p99": percentile(unavailable, 99),
            "events": sum(r["events"] for r in rs),
        }
        controller = [r["controller"] for r in rs if "controller" in r]
        if controller:
            row["controller"] = {
                key: sum(c[key] for c in controller)
                for key in CONTROLLER_TOTALS
                if all(key in c for c in controller)
            }
        data = [r["data"] for r in rs if "data" in r]
        if data:
            row["data"] = {key: sum(d.get(key, 0) for d in data) for key in DATA_TOTALS}
            row["data"]["seeds_lost_to_power_loss"] = sorted(
                r["seed"] for r in rs if r.get("data", {}).get("acked_lost_to_power_loss", 0)
            )
        increases = [r["majority_epoch_increase"] for r in rs if "majority_epoch_increase" in r]
        if increases:
            row["mean_majority_epoch_increase"] = round(sum(increases) / len(increases), 3)
            row["seeds_majority_epoch_rose"] = sum(1 for i in increases if i > 0)
            row["seeds_leader_deposed"] = sum(1 for r in rs if r.get("leader_deposed_on_rejoin"))
        handover = [r for r in rs if "handovers" in r]
        if handover:
            for key in (
                "handovers",
                "handovers_checked",
                "handovers_first_successor_won",
                "handovers_outran",
                "handovers_answer_in_flight",
            ):
                row[key] = sum(r.get(key, 0) for r in handover)
        table[scenario] = row
    return table
