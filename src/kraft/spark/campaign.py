"""``kraft sim campaign``: simulator seed campaigns on Spark.

    kraft sim campaign --scenarios LIST --seeds A..B --out OUT [--voters 3,5]
                       [--compare-prevote | --no-prevote] [--master URL] [--partitions-per-core K]

Every (scenario, voter count, Pre-Vote on/off, seed) is one run of ``kraft.sim.runner.run_seed``,
exactly what ``kraft sim run`` / ``kraft sim sweep`` run, so the trace hashes are the same. Runs are
grouped into *units* (one scenario, voter count and Pre-Vote mode, a slice of the seeds), and the
units into a few partitions per core (``--partitions-per-core``, default 3, of the master's
``defaultParallelism``), balanced by an estimated cost. One Spark task runs one partition: a task
costs about 30 ms in local mode, a seed 0.2-0.6 s, so a task per seed would waste a tenth of the
time. The results come back as one row per run (``RUN_COLUMNS``), are written as
``OUT/runs.parquet`` and summarised per (scenario, voters, pre_vote) into ``OUT/summary.json``,
``OUT/summary.md`` (also printed) and PNG plots. The exit status is 1 if any run violated an
invariant (each failing seed is printed with its ``kraft sim run`` command), 2 on bad arguments.

Planning, flattening, the summary and the plots are plain functions of plain data (no Spark), tested
as such; only ``execute`` and ``write_runs`` need a SparkSession. This module imports neither
pyspark nor matplotlib at import time, so executors can import it cheaply.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from kraft.sim.runner import CONTROLLER_TOTALS, percentile, reproduce_command

DEFAULT_PARTITIONS_PER_CORE = 3
UNITS_PER_PARTITION = 4  # units planned per partition: granularity for the cost balancing

# ------------------------------------------------------------------------------------------ planning


class Unit(NamedTuple):
    """A slice of one campaign cell: runs ``run_seed(scenario, s, voters=..., pre_vote=...)`` for s in
    ``seeds`` (``voters`` None: the scenario's own count)."""

    scenario: str
    voters: int | None
    pre_vote: bool
    seeds: tuple[int, ...]


def parse_voters(text: str | None) -> list[int | None]:
    """``--voters 3,5`` -> [3, 5]; absent -> [None] (each scenario's own count)."""
    if text is None:
        return [None]
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--voters must be a comma list of voter counts, e.g. 3,5; got {text!r}") from None
    if not counts or any(not 1 <= c <= 5 for c in counts):
        raise ValueError(f"--voters takes counts from 1 to 5; got {text!r}")
    return list(dict.fromkeys(counts))


def expand_scenario_list(text: str) -> list[str]:
    """``steady,raft`` -> the names, in order, without repeats (groups via ``scenario_group``).

    Raises:
        KeyError: an unknown name (the message names the known ones).
    """
    from kraft.sim.scenarios import scenario_group

    names: list[str] = []
    for part in text.split(","):
        if part.strip():
            names.extend(scenario_group(part.strip()))
    if not names:
        raise KeyError("no scenario given")
    return list(dict.fromkeys(names))


def describe_seeds(seeds: Sequence[int]) -> str:
    """``1..100`` for a contiguous ascending run, else a comma list (shortened past 10)."""
    if not seeds:
        return "none"
    if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}..{seeds[-1]}"
    if len(seeds) <= 10:
        return ",".join(str(s) for s in seeds)
    return ",".join(str(s) for s in seeds[:10]) + f",... ({len(seeds)} seeds)"


def scenario_cost(scenario: str, voters: int | None) -> float:
    """Estimated cost of one seed: virtual duration x nodes (events grow with both)."""
    from kraft.sim.scenarios import all_scenarios

    s = all_scenarios().get(scenario)
    if s is None:
        return 1.0
    return float(s.duration_ms * ((voters if voters is not None else s.voters) + s.observers))


def plan_units(
    scenarios: Sequence[str],
    seeds: Sequence[int],
    voters: Sequence[int | None],
    pre_votes: Sequence[bool],
    partitions: int,
    *,
    units_per_partition: int = UNITS_PER_PARTITION,
    cost: Callable[[str, int | None], float] = scenario_cost,
) -> list[list[Unit]]:
    """The campaign's units, grouped into at most ``partitions`` non-empty bins of similar cost.

    Each cell (scenario, voters, pre_vote) is cut into consecutive seed slices of at most
    ceil(runs / (partitions * units_per_partition)) seeds; the slices go to bins longest first, each
    to the least loaded bin (LPT). Within a bin, units keep the plan's order. Deterministic.
    """
    if partitions < 1:
        raise ValueError("partitions must be >= 1")
    cells = [(s, v, p) for s in scenarios for v in voters for p in pre_votes]
    total = len(cells) * len(seeds)
    if total == 0:
        return []
    chunk = max(1, math.ceil(total / (partitions * max(1, units_per_partition))))
    units: list[Unit] = []
    for scenario, v, p in cells:
        for i in range(0, len(seeds), chunk):
            units.append(Unit(scenario, v, p, tuple(seeds[i : i + chunk])))
    costs = {u: cost(u.scenario, u.voters) * len(u.seeds) for u in units}
    order = {u: i for i, u in enumerate(units)}
    bins: list[list[Unit]] = [[] for _ in range(min(partitions, len(units)))]
    load = [0.0] * len(bins)
    for unit in sorted(units, key=lambda u: (-costs[u], order[u])):
        target = min(range(len(bins)), key=lambda b: (load[b], b))
        bins[target].append(unit)
        load[target] += costs[unit]
    for b in bins:
        b.sort(key=lambda u: order[u])
    return [b for b in bins if b]


# ------------------------------------------------------------------------------------------ rows

# Controller figures copied into a run's row (``controller_<name>``; null for raft scenarios).
CONTROLLER_COLUMNS = (
    *CONTROLLER_TOTALS,
    "brokers",
    "committed_offset",
    "registrations",
    "leaderless_transitions",
    "max_elr_size",
    "alter_partitions",
)

# One row per run: (name, type, nullable). Types: string, int (32 bits), long, bool, double.
RUN_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("scenario", "string", False),
    ("voters", "int", False),
    ("observers", "int", False),
    ("pre_vote", "bool", False),
    ("seed", "long", False),
    ("trace_hash", "string", False),
    ("violations", "int", False),
    ("first_violation_invariant", "string", True),
    ("first_violation_detail", "string", True),
    ("first_violation_step", "long", True),
    ("first_violation_at_ms", "long", True),
    ("elections", "int", False),
    ("prospective_rounds", "int", False),
    ("leader_changes", "int", False),
    ("max_epoch", "int", False),
    ("first_leader_ms", "long", True),  # time to the first leader (null: never)
    ("unavailable_ms", "long", False),
    ("high_watermark", "long", False),
    ("committed_records", "long", False),
    ("events", "long", False),
    ("virtual_ms", "long", False),
    ("wall_s", "double", False),
    ("crashes", "int", False),
    ("snapshots_created", "int", False),
    ("messages_sent", "long", False),
    ("messages_delivered", "long", False),
    ("messages_dropped", "long", False),  # by partitions, loss and dead nodes
    ("majority_epoch_increase", "int", True),  # partition-rejoin
    ("leader_deposed_on_rejoin", "bool", True),  # partition-rejoin
    ("zombie_step_down_ms", "long", True),  # zombie-leader
    *((f"controller_{name}", "long", True) for name in CONTROLLER_COLUMNS),
)
RUN_COLUMN_NAMES = tuple(name for name, _, _ in RUN_COLUMNS)

CRASH_INVARIANT = "UncaughtException"  # a run that raised: reported as a violation of its own


def flatten_result(result: dict[str, Any]) -> dict[str, Any]:
    """One ``run_seed`` result as a row of ``RUN_COLUMNS`` (a dict in column order)."""
    violations = result["violations"]
    first = violations[0] if violations else {}
    messages = result.get("messages", {})
    controller = result.get("controller") or {}
    row: dict[str, Any] = {
        "scenario": result["scenario"],
        "voters": result["voters"],
        "observers": result["observers"],
        "pre_vote": result["pre_vote"],
        "seed": result["seed"],
        "trace_hash": result["trace_hash"],
        "violations": len(violations),
        "first_violation_invariant": first.get("invariant"),
        "first_violation_detail": first.get("detail"),
        "first_violation_step": first.get("step"),
        "first_violation_at_ms": first.get("at_ms"),
        "elections": result["elections"],
        "prospective_rounds": result["prospective_rounds"],
        "leader_changes": result["leader_changes"],
        "max_epoch": result["max_epoch"],
        "first_leader_ms": result["time_to_first_leader_ms"],
        "unavailable_ms": result["unavailable_ms"],
        "high_watermark": result["high_watermark"],
        "committed_records": result["committed_records"],
        "events": result["events"],
        "virtual_ms": result["virtual_ms"],
        "wall_s": float(result["wall_s"]),
        "crashes": result["crashes"],
        "snapshots_created": result["snapshots_created"],
        "messages_sent": messages.get("sent", 0),
        "messages_delivered": messages.get("delivered", 0),
        "messages_dropped": sum(
            messages.get(k, 0) for k in ("dropped_partition", "dropped_loss", "dropped_dead")
        ),
        "majority_epoch_increase": result.get("majority_epoch_increase"),
        "leader_deposed_on_rejoin": result.get("leader_deposed_on_rejoin"),
        "zombie_step_down_ms": result.get("zombie_step_down_ms"),
    }
    for name in CONTROLLER_COLUMNS:
        row[f"controller_{name}"] = controller.get(name)
    return row


def crash_row(unit: Unit, seed: int, error: BaseException, wall_s: float) -> dict[str, Any]:
    """The row of a run that raised instead of finishing: one violation, ``CRASH_INVARIANT``."""
    from kraft.sim.scenarios import all_scenarios

    known = all_scenarios().get(unit.scenario)
    voters = unit.voters if unit.voters is not None else (known.voters if known else 0)
    detail = "".join(traceback.format_exception_only(type(error), error)).strip()
    tb = traceback.extract_tb(error.__traceback__)
    if tb:
        detail += f" (at {tb[-1].filename}:{tb[-1].lineno})"
    row: dict[str, Any] = dict.fromkeys(RUN_COLUMN_NAMES)
    row.update(
        scenario=unit.scenario,
        voters=voters,
        observers=known.observers if known else 0,
        pre_vote=unit.pre_vote,
        seed=seed,
        trace_hash="",
        violations=1,
        first_violation_invariant=CRASH_INVARIANT,
        first_violation_detail=detail,
        wall_s=round(wall_s, 3),
    )
    for name, kind, nullable in RUN_COLUMNS:
        if row[name] is None and not nullable:
            row[name] = 0.0 if kind == "double" else False if kind == "bool" else 0
    return row


def run_units(units: Iterable[Unit]) -> Iterator[tuple[Any, ...]]:
    """Executor side: every seed of every unit, as row tuples in ``RUN_COLUMNS`` order."""
    from kraft.sim.runner import run_seed  # imported here: on the executor

    for unit in units:
        for seed in unit.seeds:
            started = time.perf_counter()
            try:
                result = run_seed(unit.scenario, seed, voters=unit.voters, pre_vote=unit.pre_vote)
                row = flatten_result(result)
            except Exception as e:  # one crashing seed must not lose the campaign
                row = crash_row(unit, seed, e, time.perf_counter() - started)
            yield tuple(row[name] for name in RUN_COLUMN_NAMES)


def row_dict(values: Sequence[Any]) -> dict[str, Any]:
    return dict(zip(RUN_COLUMN_NAMES, values))


# ------------------------------------------------------------------------------------------ summary


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def _spread(values: Sequence[int]) -> dict[str, Any]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    return {"p50": percentile(list(values), 50), "p99": percentile(list(values), 99), "max": max(values)}


def row_reproduce(row: dict[str, Any]) -> str:
    """The ``kraft sim run`` command of a row (``--voters`` only when not the scenario's own)."""
    from kraft.sim.scenarios import all_scenarios

    known = all_scenarios().get(row["scenario"])
    voters = None if known is not None and known.voters == row["voters"] else row["voters"]
    return reproduce_command(row["scenario"], row["seed"], pre_vote=row["pre_vote"], voters=voters)


def _group_key(row: dict[str, Any]) -> tuple[str, int, bool]:
    return row["scenario"], row["voters"], row["pre_vote"]


def summarise_rows(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Per (scenario, voters, pre_vote): seeds, violations, election counts, election latency (time
    to the first leader) and unavailability percentiles; the Pre-Vote comparison; the failures."""
    groups: dict[tuple[str, int, bool], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(_group_key(r), []).append(r)
    scenario_order = {s: i for i, s in enumerate(dict.fromkeys(k[0] for k in groups))}
    keys = sorted(groups, key=lambda k: (scenario_order[k[0]], k[1], not k[2]))
    table = []
    failures = []
    for key in keys:
        rs = sorted(groups[key], key=lambda r: r["seed"])
        scenario, voters, pre_vote = key
        latency = [r["first_leader_ms"] for r in rs if r["first_leader_ms"] is not None]
        elections = [r["elections"] for r in rs]
        row: dict[str, Any] = {
            "scenario": scenario,
            "voters": voters,
            "pre_vote": pre_vote,
            "seeds": len(rs),
            "violations": sum(r["violations"] for r in rs),
            "failing_seeds": [r["seed"] for r in rs if r["violations"]],
            "elections": {"mean": _mean(elections), **_spread(elections)},
            "prospective_rounds_mean": _mean([r["prospective_rounds"] for r in rs]),
            "leader_changes": {
                "mean": _mean([r["leader_changes"] for r in rs]),
                "max": max(r["leader_changes"] for r in rs),
            },
            "max_epoch": {
                "mean": _mean([r["max_epoch"] for r in rs]),
                "max": max(r["max_epoch"] for r in rs),
            },
            "election_latency_ms": {**_spread(latency), "no_leader": len(rs) - len(latency)},
            "unavailable_ms": {
                "mean": _mean([r["unavailable_ms"] for r in rs]),
                **_spread([r["unavailable_ms"] for r in rs]),
            },
            "events": sum(r["events"] for r in rs),
            "wall_s": round(sum(r["wall_s"] for r in rs), 3),
        }
        increases = [r["majority_epoch_increase"] for r in rs if r.get("majority_epoch_increase") is not None]
        if increases:
            row["majority_epoch_increase_mean"] = _mean(increases)
            row["seeds_majority_epoch_rose"] = sum(1 for i in increases if i > 0)
            row["seeds_leader_deposed"] = sum(1 for r in rs if r.get("leader_deposed_on_rejoin"))
        totals = {
            name: sum(r[f"controller_{name}"] for r in rs if r.get(f"controller_{name}") is not None)
            for name in CONTROLLER_TOTALS
            if any(r.get(f"controller_{name}") is not None for r in rs)
        }
        if totals:
            row["controller"] = totals
        table.append(row)
        for r in rs:
            if r["violations"]:
                failures.append(
                    {
                        "scenario": scenario,
                        "voters": voters,
                        "pre_vote": pre_vote,
                        "seed": r["seed"],
                        "violations": r["violations"],
                        "invariant": r["first_violation_invariant"],
                        "step": r.get("first_violation_step"),
                        "detail": r["first_violation_detail"],
                        "reproduce": row_reproduce(r),
                    }
                )
    return {
        "runs": sum(g["seeds"] for g in table),
        "violations": sum(g["violations"] for g in table),
        "groups": table,
        "prevote_comparison": compare_prevote(groups),
        "failures": failures,
    }


def _prevote_side(chosen: Sequence[dict[str, Any]]) -> dict[str, Any]:
    unavailable = [r["unavailable_ms"] for r in chosen]
    figures: dict[str, Any] = {
        "elections_mean": _mean([r["elections"] for r in chosen]),
        "max_epoch_mean": _mean([r["max_epoch"] for r in chosen]),
        "leader_changes_mean": _mean([r["leader_changes"] for r in chosen]),
        "unavailable_ms_mean": _mean(unavailable),
        "unavailable_ms_p50": percentile(unavailable, 50),
        "unavailable_ms_p99": percentile(unavailable, 99),
    }
    increases = [r["majority_epoch_increase"] for r in chosen if r.get("majority_epoch_increase") is not None]
    if increases:
        figures["majority_epoch_increase_mean"] = _mean(increases)
        figures["seeds_majority_epoch_rose"] = sum(1 for i in increases if i > 0)
        figures["seeds_leader_deposed"] = sum(1 for r in chosen if r.get("leader_deposed_on_rejoin"))
    return figures


def compare_prevote(groups: dict[tuple[str, int, bool], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per (scenario, voters) run both ways: disruption with and without Pre-Vote, on the seeds run
    both ways (paired: the same seed is the same network schedule until the modes diverge)."""
    out = []
    for scenario, voters, pre_vote in groups:
        if not pre_vote or (scenario, voters, False) not in groups:
            continue
        on = {r["seed"]: r for r in groups[(scenario, voters, True)]}
        off = {r["seed"]: r for r in groups[(scenario, voters, False)]}
        seeds = sorted(on.keys() & off.keys())
        if not seeds:
            continue

        out.append(
            {
                "scenario": scenario,
                "voters": voters,
                "seeds": len(seeds),
                "pre_vote": _prevote_side([on[s] for s in seeds]),
                "no_pre_vote": _prevote_side([off[s] for s in seeds]),
                "seeds_more_elections_without": sum(
                    1 for s in seeds if off[s]["elections"] > on[s]["elections"]
                ),
                "seeds_more_elections_with": sum(
                    1 for s in seeds if on[s]["elections"] > off[s]["elections"]
                ),
            }
        )
    return out


def _pv(pre_vote: bool) -> str:
    return "on" if pre_vote else "off"


def render_markdown(summary: dict[str, Any], info: dict[str, Any] | None = None) -> str:
    """The summary as Markdown (``summary.md``, also what the command prints)."""
    lines = ["# Simulation campaign", ""]
    if info:
        lines.append(
            f"{summary['runs']} runs of {', '.join(info.get('scenarios', []))} (seeds {info.get('seeds')}), "
            f"{info.get('units')} units in {info.get('partitions')} partitions / {info.get('tasks')} "
            f"tasks on {info.get('master')} (default parallelism {info.get('default_parallelism')}): "
            f"{info.get('wall_s')} s, {info.get('runs_per_s')} runs/s."
        )
        lines.append("")
    verdict = "none" if summary["violations"] == 0 else f"**{summary['violations']}**"
    lines += [f"Violations: {verdict}.", ""]
    lines += [
        "## Per scenario",
        "",
        "Election latency is the time to the first leader; unavailability the sum of commit stalls "
        "over 250 ms (start-up included). Percentiles are nearest-rank.",
        "",
        "| scenario | voters | pre-vote | seeds | violations | elections mean / p99 / max "
        "| leader changes mean / max | max epoch mean / max | election latency ms p50 / p99 / max "
        "| unavailable ms p50 / p99 / max |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for g in summary["groups"]:
        e, lat, un = g["elections"], g["election_latency_ms"], g["unavailable_ms"]
        latency = f"{lat['p50']} / {lat['p99']} / {lat['max']}"
        if lat["no_leader"]:
            latency += f" ({lat['no_leader']} without a leader)"
        lines.append(
            f"| {g['scenario']} | {g['voters']} | {_pv(g['pre_vote'])} | {g['seeds']} | {g['violations']} "
            f"| {e['mean']} / {e['p99']} / {e['max']} "
            f"| {g['leader_changes']['mean']} / {g['leader_changes']['max']} "
            f"| {g['max_epoch']['mean']} / {g['max_epoch']['max']} | {latency} "
            f"| {un['p50']} / {un['p99']} / {un['max']} |"
        )
    rejoin = [g for g in summary["groups"] if "majority_epoch_increase_mean" in g]
    if rejoin:
        lines += [
            "",
            "| scenario | voters | pre-vote | majority epoch rose (seeds) | mean increase "
            "| leader deposed on rejoin (seeds) |",
            "| --- | ---: | --- | ---: | ---: | ---: |",
        ]
        for g in rejoin:
            lines.append(
                f"| {g['scenario']} | {g['voters']} | {_pv(g['pre_vote'])} "
                f"| {g['seeds_majority_epoch_rose']}/{g['seeds']} | {g['majority_epoch_increase_mean']} "
                f"| {g['seeds_leader_deposed']}/{g['seeds']} |"
            )
    controller = [g for g in summary["groups"] if "controller" in g]
    if controller:
        lines += [
            "",
            "## Controller figures (sums over the seeds)",
            "",
            "| scenario | voters | pre-vote | partition elections | from ELR | last-known-leader | fenced "
            "| controlled shutdowns | unclean registrations | snapshots written / loaded |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for g in controller:
            c = g["controller"]
            lines.append(
                f"| {g['scenario']} | {g['voters']} | {_pv(g['pre_vote'])} | {c.get('partition_elections')} "
                f"| {c.get('elr_elections')} | {c.get('last_known_leader_elections')} "
                f"| {c.get('fenced_brokers')} | {c.get('controlled_shutdowns')} "
                f"| {c.get('unclean_registrations')} "
                f"| {c.get('snapshots_written')} / {c.get('snapshot_loads')} |"
            )
    if summary["prevote_comparison"]:
        lines += [
            "",
            "## Pre-Vote vs no Pre-Vote",
            "",
            "The same seeds run both ways (on / off).",
            "",
            "| scenario | voters | seeds | elections mean | max epoch mean | leader changes mean "
            "| unavailable ms mean | unavailable ms p99 | majority epoch rose | leader deposed "
            "| seeds with more elections without / with |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for c in summary["prevote_comparison"]:
            on, off = c["pre_vote"], c["no_pre_vote"]

            def pair(key: str, on: dict[str, Any] = on, off: dict[str, Any] = off) -> str:
                return f"{on[key]} / {off[key]}" if key in on else "-"

            lines.append(
                f"| {c['scenario']} | {c['voters']} | {c['seeds']} | {pair('elections_mean')} "
                f"| {pair('max_epoch_mean')} | {pair('leader_changes_mean')} "
                f"| {pair('unavailable_ms_mean')} | {pair('unavailable_ms_p99')} "
                f"| {pair('seeds_majority_epoch_rose')} | {pair('seeds_leader_deposed')} "
                f"| {c['seeds_more_elections_without']} / {c['seeds_more_elections_with']} |"
            )
    if summary["failures"]:
        lines += ["", "## Failing seeds", ""]
        for f in summary["failures"]:
            lines.append(
                f"- FAILED {f['scenario']} seed {f['seed']} (voters {f['voters']}, pre-vote "
                f"{_pv(f['pre_vote'])}): {f['invariant']} at step {f['step']}: {f['detail']}"
            )
            lines.append(f"  reproduce: `{f['reproduce']}`")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ plots


def _label(scenario: str, voters: int, pre_vote: bool) -> str:
    return f"{scenario} v{voters}" + ("" if pre_vote else " no-PV")


def write_plots(rows: Sequence[dict[str, Any]], summary: dict[str, Any], out_dir: Path) -> list[Path]:
    """PNGs (matplotlib's Agg canvas, no pyplot state): unavailability and election latency per
    (scenario, voters, pre-vote), and Pre-Vote vs no Pre-Vote disruption when both were run."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out_dir.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple[str, int, bool], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(_group_key(r), []).append(r)
    keys = [(g["scenario"], g["voters"], g["pre_vote"]) for g in summary["groups"]]
    written: list[Path] = []

    def boxes(column: str, title: str, xlabel: str, name: str) -> None:
        data, labels = [], []
        for key in keys:
            values = [r[column] for r in groups.get(key, []) if r[column] is not None]
            if values:
                data.append(values)
                labels.append(_label(*key))
        if not data:
            return
        fig = Figure(figsize=(9, 1.5 + 0.4 * len(data)))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.boxplot(
            data, orientation="horizontal", whis=(1, 99), showfliers=True, flierprops={"markersize": 2}
        )
        ax.set_yticks(range(1, len(labels) + 1), labels)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        path = out_dir / name
        fig.savefig(path, dpi=100)
        written.append(path)

    boxes(
        "unavailable_ms",
        "Unavailability per run (whiskers p1-p99)",
        "commit stalls over 250 ms, summed (ms)",
        "unavailability.png",
    )
    boxes(
        "first_leader_ms",
        "Election latency per run (whiskers p1-p99)",
        "time to the first leader (ms)",
        "election_latency.png",
    )
    comparison = summary["prevote_comparison"]
    if comparison:
        metrics = [
            ("elections_mean", "elections (mean)"),
            ("max_epoch_mean", "max epoch (mean)"),
            ("leader_changes_mean", "leader changes (mean)"),
            ("unavailable_ms_mean", "unavailable ms (mean)"),
        ]
        fig = Figure(figsize=(11, 2 + 0.5 * len(comparison) * 2))
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, len(metrics), sharey=True)
        names = [f"{c['scenario']} v{c['voters']}" for c in comparison]
        ys = list(range(len(comparison)))
        for ax, (key, title) in zip(axes, metrics):
            ax.barh([y - 0.2 for y in ys], [c["pre_vote"][key] for c in comparison], 0.4, label="Pre-Vote")
            ax.barh(
                [y + 0.2 for y in ys], [c["no_pre_vote"][key] for c in comparison], 0.4, label="no Pre-Vote"
            )
            ax.set_title(title, fontsize=9)
            ax.grid(axis="x", alpha=0.3)
        axes[0].set_yticks(ys, names)
        axes[0].invert_yaxis()
        axes[-1].legend(loc="lower right", fontsize=8)
        fig.suptitle("Pre-Vote vs no Pre-Vote: disruption on the same seeds")
        fig.tight_layout()
        path = out_dir / "prevote_disruption.png"
        fig.savefig(path, dpi=100)
        written.append(path)
    return written


# ------------------------------------------------------------------------------------------ report


def report(
    rows: Sequence[dict[str, Any]],
    out_dir: Path,
    out: TextIO,
    info: dict[str, Any] | None = None,
    *,
    plots: bool = True,
) -> int:
    """Summarise ``rows``: print the Markdown, write ``summary.json``, ``summary.md`` and the plots.
    Returns the exit status: 1 if any run violated an invariant, else 0."""
    summary = summarise_rows(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = {"campaign": info or {}, **summary}
    if plots:
        document["plots"] = [p.name for p in write_plots(rows, summary, out_dir)]
    (out_dir / "summary.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    text = render_markdown(summary, info)
    (out_dir / "summary.md").write_text(text)
    out.write(text)
    if summary["violations"]:
        print(
            f"kraft sim campaign: {summary['violations']} violations in {len(summary['failures'])} runs",
            file=sys.stderr,
        )
        return 1
    return 0


# ------------------------------------------------------------------------------------------ Spark


def spark_schema() -> Any:
    """``RUN_COLUMNS`` as a Spark ``StructType``."""
    from pyspark.sql import types as T

    kinds = {
        "string": T.StringType(),
        "int": T.IntegerType(),
        "long": T.LongType(),
        "bool": T.BooleanType(),
        "double": T.DoubleType(),
    }
    return T.StructType([T.StructField(n, kinds[k], nullable) for n, k, nullable in RUN_COLUMNS])


class Execution(NamedTuple):
    rows: list[dict[str, Any]]  # sorted by scenario order, voters, pre-vote (on first), seed
    partitions: int
    tasks: int  # Spark tasks the campaign's jobs ran (from the status tracker)
    wall_s: float


def execute(spark: Any, bins: Sequence[Sequence[Unit]], *, progress: bool = True) -> Execution:
    """Run the planned bins on ``spark``: one partition per bin, ``run_units`` in ``mapPartitions``.

    Progress: an accumulator counts finished runs; Spark ships accumulator updates when a task ends,
    so the bar moves task by task (more partitions per core: a finer bar, more task overhead)."""
    from tqdm import tqdm

    sc = spark.sparkContext
    total = sum(len(u.seeds) for b in bins for u in b)
    if not bins:
        return Execution([], 0, 0, 0.0)
    done_runs = sc.accumulator(0)

    def task(units: Iterable[Unit]) -> Iterator[tuple[Any, ...]]:
        for values in run_units(units):
            done_runs.add(1)
            yield values

    group = f"kraft-campaign-{uuid.uuid4().hex[:12]}"
    sc.setJobGroup(group, f"kraft sim campaign: {total} runs in {len(bins)} partitions")
    rdd = sc.parallelize([list(b) for b in bins], len(bins)).flatMap(lambda b: b).mapPartitions(task)
    bar = tqdm(total=total, file=sys.stderr, unit="run", disable=None if progress else True)
    finished = threading.Event()

    def poll() -> None:
        while not finished.wait(0.5):
            bar.update(min(total, done_runs.value) - bar.n)  # retried tasks add again

    poller = threading.Thread(target=poll, name="kraft-campaign-progress", daemon=True)
    started = time.perf_counter()
    poller.start()
    try:
        collected = rdd.collect()  # in this thread: Ctrl-C cancels the job
    finally:
        finished.set()
        poller.join()
        bar.update(min(total, done_runs.value) - bar.n)  # retried tasks add again
        bar.close()
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    wall_s = time.perf_counter() - started
    tracker = sc.statusTracker()
    tasks = 0
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job else ():
            stage = tracker.getStageInfo(stage_id)
            tasks += stage.numTasks if stage else 0
    rows = [row_dict(values) for values in collected]
    order: dict[str, int] = {}
    for b in bins:
        for u in b:
            order.setdefault(u.scenario, len(order))
    rows.sort(key=lambda r: (order.get(r["scenario"], len(order)), r["voters"], not r["pre_vote"], r["seed"]))
    return Execution(rows, rdd.getNumPartitions(), tasks, wall_s)


def write_runs(spark: Any, rows: Sequence[dict[str, Any]], path: Path) -> None:
    """``rows`` as one Parquet dataset (a directory with one part file) under ``path``."""
    frame = spark.createDataFrame([tuple(r[n] for n in RUN_COLUMN_NAMES) for r in rows], spark_schema())
    frame.coalesce(1).write.mode("overwrite").parquet(str(path))


def campaign(
    spark: Any,
    scenarios: Sequence[str],
    seeds: Sequence[int],
    out_dir: Path,
    out: TextIO,
    *,
    voters: Sequence[int | None] = (None,),
    pre_votes: Sequence[bool] = (True,),
    partitions_per_core: int = DEFAULT_PARTITIONS_PER_CORE,
    progress: bool = True,
    plots: bool = True,
) -> tuple[int, dict[str, Any]]:
    """Plan, run on ``spark``, write ``runs.parquet`` and the report. Returns (exit status, info)."""
    parallelism = spark.sparkContext.defaultParallelism
    bins = plan_units(scenarios, seeds, voters, pre_votes, max(1, partitions_per_core * parallelism))
    done = execute(spark, bins, progress=progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_runs(spark, done.rows, out_dir / "runs.parquet")
    info = {
        "scenarios": list(scenarios),
        "seeds": describe_seeds(seeds),
        "voters": ["scenario's own" if v is None else v for v in voters],
        "pre_vote": list(pre_votes),
        "master": spark.sparkContext.master,
        "default_parallelism": parallelism,
        "partitions_per_core": partitions_per_core,
        "units": sum(len(b) for b in bins),
        "partitions": done.partitions,
        "tasks": done.tasks,
        "runs": len(done.rows),
        "wall_s": round(done.wall_s, 2),
        "runs_per_s": round(len(done.rows) / done.wall_s, 2) if done.wall_s > 0 else None,
    }
    return report(done.rows, out_dir, out, info, plots=plots), info


def main(args: argparse.Namespace, out: TextIO) -> int:
    """``kraft sim campaign`` (arguments parsed by ``kraft.cli.sim``)."""
    try:
        scenarios = expand_scenario_list(args.scenarios)
        voters = parse_voters(args.voters)
    except (KeyError, ValueError) as e:
        print(f"kraft sim: {e.args[0]}", file=sys.stderr)
        return 2
    if args.partitions_per_core < 1:
        print("kraft sim: --partitions-per-core must be >= 1", file=sys.stderr)
        return 2
    pre_votes = [True, False] if args.compare_prevote else [not args.no_prevote]
    from pyspark.sql import SparkSession

    from kraft.spark.session import kraft_session

    existing = SparkSession.getActiveSession()
    spark = kraft_session(args.master, "kraft-sim-campaign")
    if existing is None:
        spark.sparkContext.setLogLevel("ERROR")
    try:
        status, _ = campaign(
            spark,
            scenarios,
            args.seeds,
            Path(args.out),
            out,
            voters=voters,
            pre_votes=pre_votes,
            partitions_per_core=args.partitions_per_core,
        )
    finally:
        if existing is None:
            spark.stop()
    return status
