"""The simulator's command line: ``python -m kraft.sim`` and ``kraft sim`` (which adds ``campaign``).

    run --scenario NAME --seed N [--voters 1..9] [--observers K] [--duration-ms T] [--no-prevote] [--json]
    sweep --scenario NAME|all|raft|controller --seeds A..B [--workers K] [--no-prevote] [--voters N] [--json]
    list

``run`` exits 1 if any invariant was violated. ``sweep`` prints a per-scenario table, a reproduce
command per failing seed, and exits 1 on any violation. Progress goes to stderr. The simulator owns
its command line so that it never depends on ``kraft.cli`` (imports point inwards).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any, TextIO


def parse_seeds(text: str) -> list[int]:
    """``A..B`` (inclusive), ``A-B`` or a comma list: ``1..100``, ``7``, ``1,5,9``."""
    try:
        if ".." in text:
            lo, hi = text.split("..", 1)
            a, b = int(lo), int(hi)
        elif "," in text:
            return [int(x) for x in text.split(",") if x.strip()]
        else:
            a = b = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must look like A..B, N or A,B,C; got {text!r}") from None
    if b < a:
        raise argparse.ArgumentTypeError(f"seed range {text!r} is empty (end before start)")
    return list(range(a, b + 1))


def build_parser(prog: str = "python -m kraft.sim") -> tuple[argparse.ArgumentParser, Any]:
    """The parser and its subcommands (``kraft.cli.sim`` adds ``campaign`` to them)."""
    parser = argparse.ArgumentParser(prog=prog, description="deterministic fault-injecting simulator")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one seed of one scenario")
    run.add_argument("--scenario", required=True)
    run.add_argument("--seed", type=int, required=True)
    run.add_argument("--voters", type=int, choices=range(1, 10), metavar="{1..9}", default=None)
    run.add_argument("--observers", type=int, default=None)
    run.add_argument("--duration-ms", type=int, default=None)
    run.add_argument("--no-prevote", action="store_true", help="3.9-style elections (KIP-996 off)")
    run.add_argument("--json", action="store_true")

    sweep = sub.add_parser("sweep", help="run many seeds and summarise")
    sweep.add_argument(
        "--scenario",
        required=True,
        help="a scenario name, 'all', 'raft', 'controller' (the controller-*) or 'data' (the data-*)",
    )
    sweep.add_argument("--seeds", type=parse_seeds, required=True, help="A..B inclusive")
    sweep.add_argument("--workers", type=int, default=1)
    sweep.add_argument("--voters", type=int, choices=range(1, 10), metavar="{1..9}", default=None)
    sweep.add_argument("--no-prevote", action="store_true")
    sweep.add_argument("--json", action="store_true")
    sweep.add_argument(
        "--node-logs",
        action="store_true",
        help="keep the simulated nodes' own log lines (off: thousands per sweep; `run` keeps them)",
    )

    sub.add_parser("list", help="list the scenarios")
    return parser, sub


def _print_run(result: dict[str, Any], out: TextIO) -> None:
    status = "FAILED" if result["violations"] else "ok"
    print(
        f"scenario {result['scenario']} seed {result['seed']} "
        f"(voters {result['voters']}, observers {result['observers']}, "
        f"pre-vote {'on' if result['pre_vote'] else 'off'}): {status}",
        file=out,
    )
    print(
        f"  {result['events']} events over {result['virtual_ms']} virtual ms in {result['wall_s']} s; "
        f"{result['crashes']} crashes",
        file=out,
    )
    first = result["time_to_first_leader_ms"]
    print(
        f"  first leader at {first if first is not None else 'never'} ms; elections {result['elections']}, "
        f"pre-vote rounds {result['prospective_rounds']}, leader changes {result['leader_changes']}, "
        f"max epoch {result['max_epoch']}",
        file=out,
    )
    print(
        f"  committed: high watermark {result['high_watermark']}, {result['committed_records']} records; "
        f"unavailable {result['unavailable_ms']} ms; snapshots {result['snapshots_created']}",
        file=out,
    )
    for key in ("majority_epoch_increase", "leader_deposed_on_rejoin", "zombie_step_down_ms"):
        if key in result:
            print(f"  {key}: {result[key]}", file=out)
    controller = result.get("controller")
    if controller is not None:
        c = controller
        print(
            f"  controller: {c['brokers']} brokers; partition elections {c['partition_elections']} "
            f"({c['elr_elections']} from ELR, {c['last_known_leader_elections']} last-known-leader, "
            f"{c.get('unclean_recovery_elections', 0)} unclean recovery); "
            f"fenced {c['fenced_brokers']}, unfenced {c['unfenced_brokers']}; controlled shutdowns "
            f"{c['controlled_shutdowns']}; unclean registrations {c['unclean_registrations']}; topics "
            f"+{c['topics_created']}/-{c['topics_deleted']}; snapshots {c['snapshots_written']} written, "
            f"{c['snapshot_loads']} loaded; committed offset {c['committed_offset']}",
            file=out,
        )
    data = result.get("data")
    if data is not None:
        d = data
        print(
            f"  data: {d['acked_records']} acknowledged, {d['consumed_records']} consumed; lost "
            f"{d['lost_records']}; lost to power loss: {d['acked_lost_to_power_loss']} acknowledged "
            f"(partitions {d['acked_lost_to_power_loss_partitions']}), {d['read_lost_to_power_loss']} "
            f"read but unacknowledged; power losses {d['power_losses']}",
            file=out,
        )
    for v in result["violations"]:
        print(
            f"  VIOLATION {v['invariant']} at step {v['step']} (t={v['at_ms']} ms): {v['detail']}", file=out
        )
    if result["violations"]:
        print(f"  reproduce: {result['reproduce']}", file=out)


def _quiet_nodes() -> None:
    """Silence the simulated nodes' log lines (the cores' ``kraft.*`` loggers) for a sweep: a
    controller sweep's brokers alone write "heartbeat answered NOT_CONTROLLER" by the thousand, which
    buries the table. A run's result, violations and trace hash are what a sweep checks; ``kraft sim
    run`` (one seed, to debug) keeps the lines, and so does ``sweep --node-logs``."""
    logging.getLogger("kraft").setLevel(logging.CRITICAL + 1)


def _sweep(args: argparse.Namespace, out: TextIO) -> int:
    from kraft.sim.runner import _run_args, expand_scenarios, reproduce_command, summarise

    try:
        scenarios = expand_scenarios(args.scenario)
    except KeyError as e:
        print(f"kraft sim: {e.args[0]}", file=sys.stderr)
        return 2
    pre_vote = not args.no_prevote
    jobs = [(s, seed, args.voters, pre_vote) for s in scenarios for seed in args.seeds]
    results: list[dict[str, Any]] = []
    from tqdm import tqdm

    bar = tqdm(total=len(jobs), file=sys.stderr, unit="seed", disable=None)
    nodes_logger = logging.getLogger("kraft")
    level = nodes_logger.level
    if not args.node_logs:
        _quiet_nodes()
    try:
        if args.workers > 1:
            import multiprocessing

            initializer = None if args.node_logs else _quiet_nodes
            with multiprocessing.get_context("spawn").Pool(args.workers, initializer) as pool:
                for result in pool.imap_unordered(_run_args, jobs, chunksize=1):
                    results.append(result)
                    bar.update(1)
        else:
            for job in jobs:
                results.append(_run_args(job))
                bar.update(1)
    finally:
        bar.close()
        nodes_logger.setLevel(level)
    results.sort(key=lambda r: (r["scenario"], r["seed"]))
    table = summarise(results)
    failing = [r for r in results if r["violations"]]
    if args.json:
        json.dump({"summary": table, "runs": results}, out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        header = (
            f"{'scenario':<30} {'seeds':>5} {'viol':>5} {'epoch mean/max':>15} {'elections':>9} "
            f"{'leader chg':>10} {'unavail p50/p99 ms':>19}"
        )
        print(header, file=out)
        for scenario, row in table.items():
            print(
                f"{scenario:<30} {row['seeds']:>5} {row['violations']:>5} "
                f"{row['mean_max_epoch']:>9}/{row['max_epoch']:<5} {row['mean_elections']:>9} "
                f"{row['mean_leader_changes']:>10} "
                f"{row['unavailable_ms_p50']:>9}/{row['unavailable_ms_p99']:<9}",
                file=out,
            )
            if "controller" in row:
                c = row["controller"]
                print(
                    f"{'':<30} partition elections {c['partition_elections']} "
                    f"({c['elr_elections']} from ELR, {c['last_known_leader_elections']} last-known-leader, "
                    f"{c.get('unclean_recovery_elections', 0)} unclean recovery), "
                    "fenced brokers "
                    f"{c['fenced_brokers']}, controlled shutdowns {c['controlled_shutdowns']}, unclean "
                    f"registrations {c['unclean_registrations']}, snapshots {c['snapshots_written']} written "
                    f"/ {c['snapshot_loads']} loaded",
                    file=out,
                )
            if "data" in row:
                d = row["data"]
                print(
                    f"{'':<30} acknowledged {d['acked_records']}, lost {d['lost_records']}; lost to power "
                    f"loss {d['acked_lost_to_power_loss']} acknowledged + {d['read_lost_to_power_loss']} "
                    f"read (seeds {d['seeds_lost_to_power_loss']}); power losses {d['power_losses']}",
                    file=out,
                )
            if "mean_majority_epoch_increase" in row:
                print(
                    f"{'':<30} majority epoch rose in {row['seeds_majority_epoch_rose']}/{row['seeds']} "
                    "seeds "
                    f"(mean +{row['mean_majority_epoch_increase']}); leader deposed on rejoin in "
                    f"{row['seeds_leader_deposed']}/{row['seeds']}",
                    file=out,
                )
        for r in failing:
            first = r["violations"][0]
            print(
                f"FAILED {r['scenario']} seed {r['seed']}: {first['invariant']} at step {first['step']}: "
                f"{first['detail']}",
                file=out,
            )
            print(
                "  reproduce: "
                + reproduce_command(r["scenario"], r["seed"], pre_vote=pre_vote, voters=args.voters),
                file=out,
            )
    return 1 if failing else 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``python -m kraft.sim [run|sweep|list] ...`` (``run`` is the default)."""
    out = out if out is not None else sys.stdout
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] not in ("run", "sweep", "list", "-h", "--help"):
        args = ["run", *args]
    parser, _ = build_parser()
    return run_command(parser.parse_args(args), out)


def run_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run a parsed ``run``, ``sweep`` or ``list`` command; returns the exit code."""
    if args.command == "list":
        from kraft.sim.scenarios import all_scenarios

        for s in all_scenarios().values():
            print(
                f"{s.name:<30} {s.voters} voters, {s.observers} observers, {s.duration_ms} ms: "
                + s.description,
                file=out,
            )
        return 0
    if args.command == "sweep":
        if args.workers < 1:
            print("kraft sim: --workers must be >= 1", file=sys.stderr)
            return 2
        return _sweep(args, out)
    from kraft.sim.runner import run_seed
    from kraft.sim.scenarios import all_scenarios

    known = all_scenarios()
    if args.scenario not in known:
        print(f"kraft sim: unknown scenario {args.scenario!r}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    if args.observers is not None and args.observers < 0:
        print("kraft sim: --observers must be >= 0", file=sys.stderr)
        return 2
    if args.duration_ms is not None and args.duration_ms <= 0:
        print("kraft sim: --duration-ms must be > 0", file=sys.stderr)
        return 2
    result = run_seed(
        args.scenario,
        args.seed,
        voters=args.voters,
        observers=args.observers,
        duration_ms=args.duration_ms,
        pre_vote=not args.no_prevote,
    )
    if args.json:
        json.dump(result, out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        _print_run(result, out)
    return 1 if result["violations"] else 0
