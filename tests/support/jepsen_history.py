"""The history of a Jepsen-style data-plane run and the pure checker over it (spec dataplane.md 8).

A history is what the clients saw, nothing more: every acknowledged write (producer, value,
partition, offset) and every failed one, every record each reader polled (in poll order, with the
seeks it made), the final read of every partition from offset 0 to its end, and the nemesis'
actions (for the timeline, not for the checks). It is recorded by ``jepsen_workload`` against real
processes and built by hand in the unit tests; ``check`` reads it and mutates nothing.

The checks, each one a count that must be 0 on a correct system:

* **lost writes**: a value acknowledged with acks=all that the final read does not contain;
* **duplicates**: one value found at two positions (partition, offset) by any reader;
* **inconsistent offsets**: one position read with two different values, across all readers;
* **non-monotonic reads**: a reader's offsets in one partition not strictly increasing between two
  seeks (a reader that sought to offset ``o`` next expects an offset ``>= o``);
* **acknowledged offset mismatches**: the final read has, at a position a write was acknowledged
  at, a different value than the one acknowledged.

Values must be unique per write (the workload sends ``"<producer>-<counter>"``), so a duplicate is
either a producer's resend or the broker's doing; without idempotence a resend is legal Kafka
behaviour, so each duplicate says whether it is shaped like one (``Duplicate.retry_shaped``).
Reported, not gated: the **longest unavailability** (longest window of the produce phase without
a successful acknowledgement), acknowledged values **unseen** by the live consumers (they poll until
the end, so this counts a consumer that stopped making progress), **poll skips** (a reader's offset
jumping past the next one: Kafka's offsets are dense without transactions or compaction), and
failed writes that were read anyway (indeterminate failures, legal in Kafka: a timed-out append
stays in the log).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

FINAL_READER = "final"  # the reader name of the final read


@dataclass(frozen=True, slots=True)
class Ack:
    """A write the producer got an acknowledgement for (acks=all)."""

    time_s: float
    producer: int
    value: str
    partition: int
    offset: int  # -1: acknowledged without an offset (the client reported none)


@dataclass(frozen=True, slots=True)
class Failure:
    """A write whose delivery report was an error (it may still be in the log)."""

    time_s: float
    producer: int
    value: str
    partition: int
    error: str


@dataclass(frozen=True, slots=True)
class Read:
    """One record a reader polled."""

    time_s: float
    reader: str
    partition: int
    offset: int
    value: str


@dataclass(frozen=True, slots=True)
class Seek:
    """A reader (re)positioned in a partition: the next offset it reads may be anything >= ``offset``."""

    time_s: float
    reader: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class NemesisEvent:
    """A fault started or healed (``action`` like ``kill``, ``restart``, ``pause``, ``resume``)."""

    time_s: float
    action: str
    node: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class PartitionObservation:
    """A partition's leader and ISR as a broker's Metadata showed them (recorded when they change)."""

    time_s: float
    partition: int
    leader: int
    isr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClientError:
    """An error a client reported that is not a delivery report (a consumer's error event)."""

    time_s: float
    client: str
    error: str


@dataclass(slots=True)
class History:
    """Everything recorded. ``reads`` holds each reader's ``Read``s and ``Seek``s in the order that
    reader made them (readers may be interleaved); the final read is reader ``FINAL_READER``.
    ``final_ends`` maps each partition to the offset the final read had to reach (its high
    watermark after the heal)."""

    produce_start_s: float
    produce_end_s: float
    acks: list[Ack] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    reads: list[Read | Seek] = field(default_factory=list)
    final_ends: dict[int, int] = field(default_factory=dict)
    nemesis: list[NemesisEvent] = field(default_factory=list)
    partition_states: list[PartitionObservation] = field(default_factory=list)
    client_errors: list[ClientError] = field(default_factory=list)


# -- anomalies -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LostWrite:
    value: str
    partition: int
    offset: int
    ack_time_s: float
    # At or past the end the final read was given (the partition's high watermark after the heal):
    # the value may still be in the replicas' logs, above a high watermark that did not come back.
    above_final_end: bool = False


@dataclass(frozen=True, slots=True)
class Duplicate:
    value: str
    positions: tuple[tuple[int, int], ...]  # (partition, offset), sorted
    acked_at: tuple[int, int] | None = None  # where the producer's acknowledgement put it, if any

    @property
    def retry_shaped(self) -> bool:
        """Looks like a producer's resend: every copy in one partition and no acknowledgement of
        an earlier copy than the last. librdkafka resends a batch answered NOT_LEADER_OR_FOLLOWER
        without counting a retry (it takes that answer for "not persisted"; ``retries=0`` does not
        stop it), and a leader that loses its leadership while an acks=all append waits answers
        exactly that, with the records already in its log (Kafka's
        ``Partition.checkEnoughReplicasReachOffset``): so without idempotence such duplicates
        are Kafka's behaviour, not a broker fault."""
        partitions = {p for p, _ in self.positions}
        return len(partitions) == 1 and (self.acked_at is None or self.acked_at == self.positions[-1])


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """What a broker's segment file says of one record: the batch's producer id, producer epoch
    and base sequence, and the record's own timestamp (CreateTime: set by the client when it took
    the record, kept across its resends)."""

    producer_id: int
    producer_epoch: int
    sequence: int
    timestamp: int


def epoch_bump_resends(
    found: Iterable[Duplicate], stored: Mapping[tuple[int, int], StoredRecord]
) -> tuple[Duplicate, ...]:
    """The duplicates an idempotent producer made itself: every copy in one partition, written by
    one producer id with one timestamp (one record the client sent again), each later copy under
    a higher producer epoch. librdkafka, after a message timeout (or an out-of-order answer to a
    request queued behind a failed one), bumps its epoch and re-sends the records it still holds
    under new sequence numbers, also those that may already be in the log
    (confluentinc/librdkafka#4953, open; its maintainers: the idempotent producer's exactly-once is
    partial, transactions give it). A broker cannot tell such a copy from a new record: the
    sequence starts again with the epoch, for Kafka's brokers as for kraft's. A duplicate with a
    copy not found in ``stored`` is not counted as one."""
    out: list[Duplicate] = []
    for d in found:
        copies = [stored.get(position) for position in d.positions]
        if len({p for p, _ in d.positions}) != 1 or any(c is None for c in copies):
            continue
        known = [c for c in copies if c is not None]
        if len({(c.producer_id, c.timestamp) for c in known}) != 1 or known[0].producer_id < 0:
            continue
        epochs = [c.producer_epoch for c in known]  # positions are in offset order
        if all(a < b for a, b in pairwise(epochs)):
            out.append(d)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class InconsistentOffset:
    partition: int
    offset: int
    values: tuple[str, ...]  # sorted
    readers: tuple[str, ...]  # sorted


@dataclass(frozen=True, slots=True)
class NonMonotonicRead:
    reader: str
    partition: int
    previous_offset: int
    offset: int
    time_s: float


@dataclass(frozen=True, slots=True)
class AckMismatch:
    partition: int
    offset: int
    acked_value: str
    final_value: str


@dataclass(frozen=True, slots=True)
class PollSkip:
    reader: str
    partition: int
    expected_offset: int
    offset: int
    time_s: float


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What ``check`` found; ``ok`` is False when any of the five gated checks is not 0."""

    lost_writes: tuple[LostWrite, ...]
    duplicates: tuple[Duplicate, ...]
    inconsistent_offsets: tuple[InconsistentOffset, ...]
    nonmonotonic_reads: tuple[NonMonotonicRead, ...]
    ack_offset_mismatches: tuple[AckMismatch, ...]
    longest_unavailability_s: float
    unavailability_window_s: tuple[float, float]
    # partition -> (longest window without an ack to that partition, (start, end))
    partition_unavailability_s: dict[int, tuple[float, tuple[float, float]]]
    poll_skips: tuple[PollSkip, ...]
    acked: int
    failed: int
    failed_but_read: int
    records_read: int
    unseen_by_consumers: int  # acked values no reader but the final one returned
    final_read_incomplete: tuple[int, ...]  # partitions whose final read stopped short of its end

    @property
    def ok(self) -> bool:
        return not any(self.gated_counts().values())

    @property
    def unexplained_duplicates(self) -> tuple[Duplicate, ...]:
        """Duplicates a producer's resend does not explain (see ``Duplicate.retry_shaped``)."""
        return tuple(d for d in self.duplicates if not d.retry_shaped)

    def gated_counts(self) -> dict[str, int]:
        return {
            "lost_writes": len(self.lost_writes),
            "duplicates": len(self.duplicates),
            "inconsistent_offsets": len(self.inconsistent_offsets),
            "nonmonotonic_reads": len(self.nonmonotonic_reads),
            "ack_offset_mismatches": len(self.ack_offset_mismatches),
        }

    def to_json(self, max_examples: int = 20) -> dict[str, Any]:
        """Counts, the informational figures and up to ``max_examples`` of each anomaly."""

        def examples(items: Iterable[Any]) -> list[dict[str, Any]]:
            return [_as_dict(x) for x in list(items)[:max_examples]]

        return {
            "ok": self.ok,
            "counts": self.gated_counts(),
            "longest_unavailability_s": round(self.longest_unavailability_s, 3),
            "unavailability_window_s": [round(t, 3) for t in self.unavailability_window_s],
            "partition_unavailability_s": {
                str(p): [round(length, 3), [round(t, 3) for t in window]]
                for p, (length, window) in sorted(self.partition_unavailability_s.items())
            },
            "poll_skips": len(self.poll_skips),
            "unexplained_duplicates": len(self.unexplained_duplicates),
            "acked": self.acked,
            "failed": self.failed,
            "failed_but_read": self.failed_but_read,
            "records_read": self.records_read,
            "unseen_by_consumers": self.unseen_by_consumers,
            "final_read_incomplete": list(self.final_read_incomplete),
            "examples": {
                "lost_writes": examples(self.lost_writes),
                "duplicates": examples(self.duplicates),
                "inconsistent_offsets": examples(self.inconsistent_offsets),
                "nonmonotonic_reads": examples(self.nonmonotonic_reads),
                "ack_offset_mismatches": examples(self.ack_offset_mismatches),
                "poll_skips": examples(self.poll_skips),
            },
        }


def _as_dict(item: Any) -> dict[str, Any]:
    out = {name: getattr(item, name) for name in item.__slots__}
    if isinstance(item, Duplicate):
        out["retry_shaped"] = item.retry_shaped
    return out


# -- the checker -----------------------------------------------------------------------------------


def check(history: History) -> CheckResult:
    """Runs every check over ``history``; pure (same history, same result)."""
    reads = [r for r in history.reads if isinstance(r, Read)]
    final = _final_positions(reads)
    nonmonotonic, skips = _order_anomalies(history.reads)
    read_values = {r.value for r in reads}
    consumed = {r.value for r in reads if r.reader != FINAL_READER}
    longest, window = longest_unavailability(
        (a.time_s for a in history.acks), history.produce_start_s, history.produce_end_s
    )
    return CheckResult(
        lost_writes=lost_writes(history.acks, final, history.final_ends),
        duplicates=duplicates(reads, history.acks),
        inconsistent_offsets=inconsistent_offsets(reads),
        nonmonotonic_reads=nonmonotonic,
        ack_offset_mismatches=ack_offset_mismatches(history.acks, final),
        longest_unavailability_s=longest,
        unavailability_window_s=window,
        partition_unavailability_s={
            p: longest_unavailability(
                (a.time_s for a in history.acks if a.partition == p),
                history.produce_start_s,
                history.produce_end_s,
            )
            for p in sorted({a.partition for a in history.acks} | {f.partition for f in history.failures})
        },
        poll_skips=skips,
        acked=len(history.acks),
        failed=len(history.failures),
        failed_but_read=sum(1 for f in history.failures if f.value in read_values),
        records_read=len(reads),
        unseen_by_consumers=sum(1 for a in history.acks if a.value not in consumed),
        final_read_incomplete=_final_read_incomplete(final, history.final_ends),
    )


def _final_positions(reads: Iterable[Read]) -> dict[tuple[int, int], str]:
    """(partition, offset) -> value as the final read saw it (the first value, if it saw two:
    ``inconsistent_offsets`` reports the second)."""
    out: dict[tuple[int, int], str] = {}
    for r in reads:
        if r.reader == FINAL_READER:
            out.setdefault((r.partition, r.offset), r.value)
    return out


def _final_read_incomplete(final: Mapping[tuple[int, int], str], ends: Mapping[int, int]) -> tuple[int, ...]:
    """Partitions where the final read did not return every offset below its end."""
    return tuple(sorted(p for p, end in ends.items() if any((p, o) not in final for o in range(end))))


def lost_writes(
    acks: Iterable[Ack], final: Mapping[tuple[int, int], str], ends: Mapping[int, int] | None = None
) -> tuple[LostWrite, ...]:
    """Acknowledged values the final read never returned (at any position: a value found at
    another offset than acknowledged is an ack mismatch, not a loss). ``ends``: where the final
    read of each partition stopped, to mark the losses at or above it."""
    seen = set(final.values())
    ends = ends or {}
    return tuple(
        LostWrite(
            a.value,
            a.partition,
            a.offset,
            a.time_s,
            a.offset >= 0 and a.offset >= ends.get(a.partition, a.offset + 1),
        )
        for a in sorted(acks, key=lambda a: (a.partition, a.offset, a.value))
        if a.value not in seen
    )


def duplicates(reads: Iterable[Read], acks: Iterable[Ack] = ()) -> tuple[Duplicate, ...]:
    """Values read at more than one position (by any readers), with where each was acked."""
    positions: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for r in reads:
        positions[r.value].add((r.partition, r.offset))
    acked = {a.value: (a.partition, a.offset) for a in acks}
    return tuple(
        Duplicate(value, tuple(sorted(where)), acked.get(value))
        for value, where in sorted(positions.items())
        if len(where) > 1
    )


def inconsistent_offsets(reads: Iterable[Read]) -> tuple[InconsistentOffset, ...]:
    """Positions read with more than one value."""
    values: dict[tuple[int, int], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in reads:
        values[(r.partition, r.offset)][r.value].add(r.reader)
    return tuple(
        InconsistentOffset(
            partition,
            offset,
            tuple(sorted(by_value)),
            tuple(sorted(set().union(*by_value.values()))),
        )
        for (partition, offset), by_value in sorted(values.items())
        if len(by_value) > 1
    )


def _order_anomalies(
    events: Iterable[Read | Seek],
) -> tuple[tuple[NonMonotonicRead, ...], tuple[PollSkip, ...]]:
    """Per reader and partition: offsets must increase between seeks (else non-monotonic); a
    jump past the next offset is a skip. Before a reader's first seek or read of a partition,
    anything goes (it starts wherever it was assigned)."""
    # (reader, partition) -> (last offset read or -1 after a seek, next offset expected)
    state: dict[tuple[str, int], tuple[int, int]] = {}
    nonmonotonic: list[NonMonotonicRead] = []
    skips: list[PollSkip] = []
    for e in events:
        key = (e.reader, e.partition)
        if isinstance(e, Seek):
            state[key] = (-1, e.offset)
            continue
        if key in state:
            last, expected = state[key]
            if e.offset < expected:
                nonmonotonic.append(NonMonotonicRead(e.reader, e.partition, last, e.offset, e.time_s))
            elif e.offset > expected:
                skips.append(PollSkip(e.reader, e.partition, expected, e.offset, e.time_s))
        state[key] = (e.offset, e.offset + 1)
    return tuple(nonmonotonic), tuple(skips)


def ack_offset_mismatches(
    acks: Iterable[Ack], final: Mapping[tuple[int, int], str]
) -> tuple[AckMismatch, ...]:
    """Acknowledged positions where the final read found another value (a position the final
    read lacks is not counted here: its value is then a lost write or a duplicate elsewhere)."""
    out: list[AckMismatch] = []
    for a in sorted(acks, key=lambda a: (a.partition, a.offset, a.value)):
        if a.offset < 0:
            continue  # acknowledged without an offset: only its value can be checked (lost_writes)
        found = final.get((a.partition, a.offset))
        if found is not None and found != a.value:
            out.append(AckMismatch(a.partition, a.offset, a.value, found))
    return tuple(out)


def longest_unavailability(
    ack_times_s: Iterable[float], start_s: float, end_s: float
) -> tuple[float, tuple[float, float]]:
    """The longest stretch of [start_s, end_s] without an acknowledgement, and where it was."""
    times = sorted(t for t in ack_times_s if start_s <= t <= end_s)
    best = (0.0, (start_s, start_s))
    previous = start_s
    for t in [*times, end_s]:
        if t - previous > best[0]:
            best = (t - previous, (previous, t))
        previous = t
    return best


# -- storage ---------------------------------------------------------------------------------------


def history_to_json(history: History) -> dict[str, Any]:
    """``history`` as JSON-ready data (rows of fields, in the dataclasses' field order), for
    ``history_from_json``: a recorded run can be checked again, or by hand, later."""
    return {
        "produce_start_s": history.produce_start_s,
        "produce_end_s": history.produce_end_s,
        "acks": [_row(a) for a in history.acks],
        "failures": [_row(f) for f in history.failures],
        "reads": [["read" if isinstance(r, Read) else "seek", *_row(r)] for r in history.reads],
        "final_ends": {str(p): end for p, end in sorted(history.final_ends.items())},
        "nemesis": [_row(e) for e in history.nemesis],
        "partition_states": [_row(o) for o in history.partition_states],
        "client_errors": [_row(e) for e in history.client_errors],
    }


def history_from_json(data: Mapping[str, Any]) -> History:
    return History(
        produce_start_s=data["produce_start_s"],
        produce_end_s=data["produce_end_s"],
        acks=[Ack(*row) for row in data["acks"]],
        failures=[Failure(*row) for row in data["failures"]],
        reads=[Read(*row[1:]) if row[0] == "read" else Seek(*row[1:]) for row in data["reads"]],
        final_ends={int(p): end for p, end in data["final_ends"].items()},
        nemesis=[NemesisEvent(*row) for row in data["nemesis"]],
        partition_states=[
            PartitionObservation(t, p, leader, tuple(isr))
            for t, p, leader, isr in data.get("partition_states", [])
        ],
        client_errors=[ClientError(*row) for row in data["client_errors"]],
    )


def _row(item: Any) -> list[Any]:
    return [getattr(item, name) for name in item.__slots__]


# -- reports ---------------------------------------------------------------------------------------

_LABELS = {
    "lost_writes": "lost writes (acked, not in the final read)",
    "duplicates": "duplicates (one value at two offsets)",
    "inconsistent_offsets": "inconsistent offsets (one offset, two values)",
    "nonmonotonic_reads": "non-monotonic reads (offset going back, no seek)",
    "ack_offset_mismatches": "acked offset mismatches (final read differs)",
}


def format_table(result: CheckResult, client_resends: int = 0) -> str:
    """The checks as a fixed-width table: the five gated counts, then what is reported only.
    ``client_resends``: duplicates found to be the idempotent producer's own resends under a new
    epoch (``epoch_bump_resends``), not counted as failures."""
    rows: list[tuple[str, str, str]] = [
        (
            _LABELS[name],
            str(count),
            "FAIL" if count - (client_resends if name == "duplicates" else 0) else "ok",
        )
        for name, count in result.gated_counts().items()
    ]
    above = sum(1 for w in result.lost_writes if w.above_final_end)
    if above:
        rows.insert(1, ("  of which at/above the final high watermark", str(above), "info"))
    if result.duplicates:
        odd = sum(1 for d in result.duplicates if not d.retry_shaped)
        at = next(i for i, r in enumerate(rows) if r[0] == _LABELS["duplicates"])
        rows.insert(at + 1, ("  of which not shaped like a producer resend", str(odd), "info"))
        if client_resends:
            rows.insert(at + 2, ("  of which re-sent by the client, new epoch", str(client_resends), "info"))
    start_s, end_s = result.unavailability_window_s
    rows += [
        (
            "longest unavailability (no ack at all)",
            f"{result.longest_unavailability_s:.2f} s",
            f"{start_s:.1f}-{end_s:.1f} s",
        ),
        *(
            (f"  partition {p}", f"{length:.2f} s", f"{start:.1f}-{end:.1f} s")
            for p, (length, (start, end)) in sorted(result.partition_unavailability_s.items())
        ),
        ("poll skips (offset jumped forward)", str(len(result.poll_skips)), "info"),
        ("acknowledged writes", str(result.acked), "info"),
        ("failed writes (of which read anyway)", f"{result.failed} ({result.failed_but_read})", "info"),
        ("records read (all readers)", str(result.records_read), "info"),
        ("acked writes no consumer read (unseen)", str(result.unseen_by_consumers), "info"),
    ]
    if result.final_read_incomplete:
        rows.append(("final read incomplete on partitions", str(list(result.final_read_incomplete)), "!"))
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    lines = [f"{'check':<{width}}  {'value':>{value_width}}  verdict", "-" * (width + value_width + 11)]
    lines += [f"{name:<{width}}  {value:>{value_width}}  {verdict}" for name, value, verdict in rows]
    return "\n".join(lines)


def format_timeline(history: History, wall_start: float | None = None) -> str:
    """The nemesis' actions and the partitions' leader and ISR changes, one a line, as seconds
    since the start (and wall-clock times, to find the matching lines in the node logs, when
    ``wall_start`` is given)."""
    events: list[tuple[float, str]] = [
        (e.time_s, f"{e.action:<8} node {e.node}{'  (' + e.detail + ')' if e.detail else ''}")
        for e in history.nemesis
    ]
    events += [
        (o.time_s, f"  partition {o.partition}: leader {o.leader}, ISR {list(o.isr)}")
        for o in history.partition_states
    ]
    lines = []
    for time_s, text in sorted(events, key=lambda e: e[0]):
        when = f"{time_s:8.2f} s"
        if wall_start is not None:
            when += f"  {_wall(wall_start + time_s)}"
        lines.append(f"{when}  {text}")
    return "\n".join(lines)


def _wall(t: float) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(t).strftime("%H:%M:%S,%f")[:-3]
