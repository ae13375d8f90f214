"""The commit path of a quorum, stage by stage, from the voters' commit traces.

``kraft test-raft-server --trace-commit-path FILE`` writes when each Fetch and its data pass the
core's poll (on the event loop or the raft thread, per ``raft.driver``) and the network code
(``kraft.common.commit_trace``). ``commit_path_stages`` joins the three voters' events offset by
offset: for each single-record append X on the leader, the chain

    append -> batch in the leader's log -> Fetch response with X ready on the leader's loop
    -> received by a follower's loop -> picked up by its poll -> follower fsync done
    -> next Fetch (offset > X) sent -> received by the leader's loop -> picked up by its poll
    -> commit notification covering X

through whichever follower acknowledged first (with 3 voters, that one makes X committed). Every
time comes from ``time.time_ns()`` on one machine, so times of different processes compare.
Used by ``benchmarks/bench_quorum.py``.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from typing import Any

from kraft.cli.write_stats import percentile
from kraft.common import commit_trace as ct

# Stage i runs from event i to event i + 1 of the chain above.
STAGES = (
    "leader: append call -> batch in its log",
    "leader: poll -> request handler, Fetch response ready",
    "leader -> follower: encode, loopback TCP, decode",
    "follower: response received -> poll",
    "follower: append and fsync",
    "follower: poll -> next Fetch sent",
    "follower -> leader: encode, loopback TCP, decode",
    "leader: request received -> poll",
    "leader: high watermark -> commit notification",
)


# No stage of a commit at light load takes a second; a longer gap means the chain is broken.
MAX_STAGE_NS = 1_000_000_000


class _Events:
    """One node's events of one kind, in time order, searchable by time."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = sorted(events, key=lambda e: e["ns"])
        self.times = [e["ns"] for e in self.events]

    def first(
        self,
        after_ns: int,
        *,
        a: int | None = None,
        a_le: int | None = None,
        a_gt: int | None = None,
        b_le: int | None = None,
        b_gt: int | None = None,
        limit: int = 64,
    ) -> int | None:
        """The time of the first event at or after ``after_ns`` whose fields match, if any within
        ``MAX_STAGE_NS`` (a chain with a missing event must not borrow a much later one)."""
        i = bisect.bisect_left(self.times, after_ns)
        for e in self.events[i : i + limit]:
            if e["ns"] - after_ns > MAX_STAGE_NS:
                return None
            if (
                (a is None or e["a"] == a)
                and (a_le is None or e["a"] <= a_le)
                and (a_gt is None or e["a"] > a_gt)
                and (b_le is None or e["b"] <= b_le)
                and (b_gt is None or e["b"] > b_gt)
            ):
                return int(e["ns"])
        return None


def _follower_chain(
    lead: dict[str, _Events], foll: dict[str, _Events], follower: int, x: int, written_ns: int
) -> list[int] | None:
    """Times of offset ``x``'s stages 2..8 through ``follower`` (None: the chain breaks)."""
    ready = lead[ct.FETCH_RESP_READY].first(written_ns, a=follower, b_le=x)
    if ready is None:
        return None
    chain = [ready]
    steps: tuple[tuple[_Events, dict[str, int]], ...] = (
        (foll[ct.FETCH_RESP_RECEIVED], {"a_le": x}),
        (foll[ct.FETCH_RESP_POLLED], {"a_le": x}),
        (foll[ct.WRITTEN], {"a_gt": x}),
        (foll[ct.FETCH_REQ_SENT], {"a_gt": x}),
        (lead[ct.FETCH_REQ_RECEIVED], {"a": follower, "b_gt": x}),
        (lead[ct.FETCH_REQ_POLLED], {"a": follower, "b_gt": x}),
    )
    for events, match in steps:
        t = events.first(chain[-1], **match)
        if t is None:
            return None
        chain.append(t)
    return chain


def commit_path_stages(events: list[dict[str, Any]], leader: int) -> dict[str, Any]:
    """Per-stage latency percentiles of the leader's appends (single-record appends only)."""
    by: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for e in events:
        by.setdefault((e["node"], e["event"]), []).append(e)

    def of(node: int, *names: str) -> dict[str, _Events]:
        return {name: _Events(by.get((node, name), [])) for name in names}

    followers = sorted({e["node"] for e in events} - {leader})
    lead = of(
        leader, ct.WRITTEN, ct.FETCH_RESP_READY, ct.FETCH_REQ_RECEIVED, ct.FETCH_REQ_POLLED, ct.COMMITTED
    )
    foll = {
        f: of(f, ct.FETCH_RESP_RECEIVED, ct.FETCH_RESP_POLLED, ct.WRITTEN, ct.FETCH_REQ_SENT)
        for f in followers
    }
    samples: list[list[float]] = []
    for append in of(leader, ct.APPEND)[ct.APPEND].events:
        x = append["a"]
        if append["b"] != x:
            continue
        t0 = int(append["ns"])
        written = lead[ct.WRITTEN].first(t0, a_gt=x)
        if written is None:
            continue
        # The commit needs one follower (3 voters): the stages of whichever acknowledged first.
        chains = [c for f in followers if (c := _follower_chain(lead, foll[f], f, x, written)) is not None]
        if not chains:
            continue
        best = min(chains, key=lambda c: c[-1])
        committed = lead[ct.COMMITTED].first(best[-1], a_gt=x - 1)
        if committed is None:
            continue
        times = [t0, written, *best, committed]
        samples.append([(b - a) / 1e6 for a, b in itertools.pairwise(times)] + [(committed - t0) / 1e6])
    out: dict[str, Any] = {"commits": len(samples), "stages": []}
    if not samples:
        return out
    for i, name in enumerate((*STAGES, "total (append call -> commit notification)")):
        values = sorted(s[i] for s in samples)
        out["stages"].append(
            {
                "stage": name,
                "p50_ms": percentile(values, 50),
                "p99_ms": percentile(values, 99),
                "mean_ms": statistics.fmean(values),
            }
        )
    return out
