"""A Jepsen-style check of kraft's data plane against real processes (spec dataplane.md 8).

    python benchmarks/jepsen_dataplane.py [--seconds S] [--seed N] [--producers N] [--consumers N]
        [--partitions N] [--rate R] [--idempotence] [--harsh] [--json OUT] [--history OUT]
        [--workdir DIR] [--keep] [--no-progress]
    python benchmarks/jepsen_dataplane.py --check-history HISTORY.json

3 controllers and 3 brokers on loopback (``tests/support/local_cluster.py``), one topic with
replication factor 3 and min.insync.replicas=2, producers (confluent-kafka, acks=all) sending
unique values, consumers polling all the time, a nemesis killing (-9), pausing and restarting
brokers and the active controller for ``--seconds``; then everything heals and a final read takes
every partition from offset 0 to its end. The workload is ``tests/support/jepsen_workload.py``, the
checker ``tests/support/jepsen_history.py`` (both documented there).

Prints the checks as a table (and writes them with the whole timeline to ``--json OUT``). Exit
status: 0 when lost writes, duplicates, inconsistent offsets, non-monotonic reads and acknowledged
offset mismatches are all 0 (with ``--idempotence``, but for duplicates the segment files show
the client re-sent under a bumped producer epoch: ``jepsen_history.epoch_bump_resends``); 1 when
any is not (then the nemesis' timeline and the node log lines about each partition in question
are printed, and the cluster's directory is kept); 2 when the run itself broke. The longest
unavailability is reported, never a failure. ``--history OUT`` saves everything the
clients saw; ``--check-history`` runs the checker on such a file again, without a cluster.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "src"))  # after PYTHONPATH (a compiled build)
sys.path.insert(0, str(ROOT / "tests" / "support"))

from jepsen_history import (  # noqa: E402
    CheckResult,
    Duplicate,
    StoredRecord,
    check,
    epoch_bump_resends,
    format_table,
    format_timeline,
    history_from_json,
    history_to_json,
)
from jepsen_workload import TOPIC, JepsenConfig, Progress, RunResult, run  # noqa: E402
from tqdm import tqdm  # noqa: E402

LOG_LINES_PER_NODE = 40


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="jepsen_dataplane",
        description="Jepsen-style check of kraft's data plane: real brokers, real clients, real faults.",
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the nemesis acts (120)")
    parser.add_argument("--seed", type=int, default=None, help="the nemesis' seed (default: random, printed)")
    parser.add_argument("--producers", type=int, default=3, help="producer threads (3)")
    parser.add_argument("--consumers", type=int, default=2, help="consumer threads (2)")
    parser.add_argument("--partitions", type=int, default=3, help="partitions of the topic (3)")
    parser.add_argument("--rate", type=float, default=50.0, help="values per second per producer (50)")
    parser.add_argument(
        "--idempotence",
        action="store_true",
        help="enable.idempotence=true on the producers (needs InitProducerId; default: off, retries=0, "
        "and a duplicate shaped like a resend may then be Kafka's behaviour)",
    )
    parser.add_argument("--harsh", action="store_true", help="allow two brokers down at once (default: one)")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the results and the timeline here")
    parser.add_argument("--history", metavar="OUT", type=Path, help="write the whole history here (JSON)")
    parser.add_argument(
        "--check-history", metavar="IN", type=Path, help="only check a history written by --history"
    )
    parser.add_argument(
        "--workdir", type=Path, help="where the cluster lives (default: a temporary directory)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the cluster's directory even on success")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--timeline", action="store_true", help="print the timeline even when every check passes"
    )
    return parser.parse_args(argv)


def partitions_in_question(result: CheckResult) -> list[int]:
    found: set[int] = set()
    found.update(w.partition for w in result.lost_writes)
    found.update(p for d in result.duplicates for p, _ in d.positions)
    found.update(i.partition for i in result.inconsistent_offsets)
    found.update(n.partition for n in result.nonmonotonic_reads)
    found.update(m.partition for m in result.ack_offset_mismatches)
    return sorted(found)


def log_lines(run_result: RunResult, partitions: Sequence[int]) -> dict[str, list[str]]:
    """For each node, its log lines about the partitions in question (truncations, leadership,
    deletions) and about its own lifecycle (fencing, registration), the last ``LOG_LINES_PER_NODE``."""
    names = "|".join(re.escape(f"{TOPIC}-{p}") for p in partitions)
    pattern = re.compile(rf"({names})\b|fenced|registered|incarnation|WARNING|ERROR")
    out: dict[str, list[str]] = {}
    for node_id in run_result.cluster.ids:
        lines = [line for line in run_result.cluster.log(node_id).splitlines() if pattern.search(line)]
        out[str(node_id)] = lines[-LOG_LINES_PER_NODE:]
    return out


def locate(run_result: RunResult, result: CheckResult) -> list[str]:
    """Where the values of lost writes and acked-offset mismatches are in the brokers' segment
    files now: (node, offset, leader epoch) of each copy, or nowhere."""
    wanted: dict[int, set[str]] = collections.defaultdict(set)
    for w in result.lost_writes:
        wanted[w.partition].add(w.value)
    for m in result.ack_offset_mismatches:
        wanted[m.partition].update((m.acked_value, m.final_value))
    found: dict[tuple[int, str], list[str]] = collections.defaultdict(list)
    for partition, values in sorted(wanted.items()):
        for node_id in run_result.cluster.broker_ids:
            for offset, epoch, raw in run_result.cluster.partition_records(node_id, TOPIC, partition):
                value = raw.decode(errors="replace")
                if value in values:
                    found[(partition, value)].append(f"node {node_id} offset {offset} epoch {epoch}")
    return [
        f"  {TOPIC}-{partition} {value!r}: {'; '.join(found[(partition, value)]) or 'in no broker log'}"
        for partition, values in sorted(wanted.items())
        for value in sorted(values)
    ][:40]


def stored_records(run_result: RunResult, partitions: Sequence[int]) -> dict[tuple[int, int], StoredRecord]:
    """Producer id, producer epoch, sequence and timestamp of every record of ``partitions`` in the
    brokers' segment files (the first broker holding an offset gives it)."""
    out: dict[tuple[int, int], StoredRecord] = {}
    for partition in partitions:
        for node_id in run_result.cluster.broker_ids:
            for offset, header, timestamp in run_result.cluster.partition_batches(node_id, TOPIC, partition):
                out.setdefault(
                    (partition, offset),
                    StoredRecord(
                        header.producer_id,
                        header.producer_epoch,
                        header.base_sequence + offset - header.base_offset,
                        timestamp,
                    ),
                )
    return out


def client_resends(run_result: RunResult, result: CheckResult) -> tuple[Duplicate, ...]:
    """The duplicates the idempotent producer made itself (``jepsen_history.epoch_bump_resends``),
    read from the brokers' files."""
    partitions = sorted({p for d in result.duplicates for p, _ in d.positions})
    return epoch_bump_resends(result.duplicates, stored_records(run_result, partitions))


def passed(result: CheckResult, resends: Sequence[Duplicate]) -> bool:
    """Every gated check is 0, but for duplicates the client made itself under a new epoch."""
    counts = result.gated_counts()
    counts["duplicates"] -= len(resends)
    return not any(counts.values())


def describe_anomalies(result: CheckResult, limit: int = 10) -> list[str]:
    lines: list[str] = []
    for name, items in (
        ("lost write", result.lost_writes),
        ("duplicate", result.duplicates),
        ("inconsistent offset", result.inconsistent_offsets),
        ("non-monotonic read", result.nonmonotonic_reads),
        ("acked offset mismatch", result.ack_offset_mismatches),
    ):
        lines += [f"  {name}: {item}" for item in list(items)[:limit]]
        if len(items) > limit:
            lines.append(f"  ... and {len(items) - limit} more {name}s")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.check_history is not None:
        result = check(history_from_json(json.loads(args.check_history.read_text())))
        print(format_table(result))
        if not result.ok:
            print("\nanomalies:")
            print("\n".join(describe_anomalies(result)))
        return 0 if result.ok else 1
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    config = JepsenConfig(
        seconds=args.seconds,
        seed=seed,
        producers=args.producers,
        consumers=args.consumers,
        partitions=args.partitions,
        rate_per_producer=args.rate,
        idempotence=args.idempotence,
        harsh=args.harsh,
    )
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kraft-jepsen-"))
    print(
        f"jepsen: seed {seed}, {config.seconds:g} s of faults{' (harsh)' if config.harsh else ''}, "
        f"{config.producers} producers x {config.rate_per_producer:g}/s, {config.consumers} consumers, "
        f"{config.partitions} partitions, idempotence {'on' if config.idempotence else 'off'}; in {workdir}",
        flush=True,
    )
    total_s = config.warmup_s + config.seconds + config.recovery_s
    bar = tqdm(total=round(total_s), unit="s", disable=args.no_progress, dynamic_ncols=True)

    last_draw = [0.0]

    def progress(p: Progress) -> None:
        if time.monotonic() - last_draw[0] < 1.0 and p.phase != "done":
            return
        last_draw[0] = time.monotonic()
        bar.n = min(round(p.elapsed_s), bar.total)
        bar.set_postfix_str(
            f"{p.phase} acked={p.acked} failed={p.failed} read={p.read} down={','.join(p.down) or '-'}",
            refresh=False,
        )
        bar.refresh()

    started = time.monotonic()
    try:
        outcome = run(config, workdir, progress)
    except Exception as e:  # the run broke (a cluster that never came up, a client that hung)
        bar.close()
        print(f"jepsen: the run failed: {type(e).__name__}: {e}\ncluster kept in {workdir}", file=sys.stderr)
        return 2
    bar.close()
    history = outcome.history
    result = check(history)
    # With idempotence, a duplicate whose later copy the client re-sent under a bumped producer
    # epoch is the client's (see ``epoch_bump_resends``); one within an epoch stays a failure.
    resends = client_resends(outcome, result) if config.idempotence and result.duplicates else ()
    ok = passed(result, resends)
    print()
    print(format_table(result, client_resends=len(resends)))
    for note in outcome.notes:
        print(f"note: {note}")
    failures = collections.Counter(f.error for f in history.failures)
    client_errors = collections.Counter(e.error.split(":")[0] for e in history.client_errors)
    print(f"failed writes by error: {dict(failures.most_common())}")
    print(f"client errors: {dict(client_errors.most_common())}")
    print(f"nemesis actions: {len(history.nemesis)}; wall time {time.monotonic() - started:.0f} s")
    in_question = partitions_in_question(result)
    logs: dict[str, list[str]] = {}
    where: list[str] = []
    if resends:
        print(
            f"  ({len(resends)} of the duplicates were re-sent by librdkafka under a new producer epoch: "
            "the same producer id and record timestamp, each later copy a higher epoch with its sequence "
            "restarted; after a message timeout the idempotent producer bumps its epoch and re-sends "
            "what it still holds, even records that may be in the log, confluentinc/librdkafka#4953)"
        )
    if not ok:
        print("\nanomalies:")
        print("\n".join(describe_anomalies(result)))
        if result.duplicates and not config.idempotence:
            resends = len(result.duplicates) - len(result.unexplained_duplicates)
            print(
                f"  ({resends} of the duplicates are shaped "
                "like producer resends: without idempotence librdkafka resends a batch answered "
                "NOT_LEADER_OR_FOLLOWER even with retries=0, and a leader deposed while an acks=all "
                "append waits answers just that, as Kafka does)"
            )
        where = locate(outcome, result)
        if where:
            print("\nthose values in the brokers' segment files now:")
            print("\n".join(where))
    if not ok or outcome.notes or args.timeline:
        print(
            f"\ntimeline (seed {seed}; faults, and each partition's leader and ISR as Metadata showed them):"
        )
        print(format_timeline(history, outcome.wall_start))
    if not ok:
        logs = log_lines(outcome, in_question)
        for node_id, lines in logs.items():
            if lines:
                print(f"\n--- node {node_id} ({outcome.cluster.node(int(node_id)).server_log}):")
                print("\n".join(lines))
    if args.json is not None:
        data: dict[str, Any] = {
            "seed": seed,
            "config": {
                "seconds": config.seconds,
                "producers": config.producers,
                "consumers": config.consumers,
                "partitions": config.partitions,
                "rate_per_producer": config.rate_per_producer,
                "idempotence": config.idempotence,
                "harsh": config.harsh,
            },
            "result": result.to_json(),
            "passed": ok,
            "duplicates_resent_by_client": [d.value for d in resends],
            "failed_writes_by_error": dict(failures),
            "client_errors": dict(client_errors),
            "notes": outcome.notes,
            "partition_state_after_heal": {
                str(p): {"leader": leader, "isr": list(isr)}
                for p, (leader, isr) in outcome.partition_state.items()
            },
            "timeline": [
                {"time_s": round(e.time_s, 3), "action": e.action, "node": e.node, "detail": e.detail}
                for e in history.nemesis
            ],
            "partition_states": [
                {
                    "time_s": round(o.time_s, 3),
                    "partition": o.partition,
                    "leader": o.leader,
                    "isr": list(o.isr),
                }
                for o in history.partition_states
            ],
            "wall_start": outcome.wall_start,
            "workdir": str(workdir),
            "log_lines": logs,
            "values_on_disk": where,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2, default=list) + "\n")
    if args.history is not None:
        args.history.parent.mkdir(parents=True, exist_ok=True)
        args.history.write_text(json.dumps(history_to_json(history)) + "\n")
    if ok and not args.keep and args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"cluster kept in {workdir}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
