"""Timestamps along the commit path, for the quorum benchmark's per-stage breakdown.

Off unless a process turns it on (``kraft test-raft-server --trace-commit-path FILE``): then the
driver around the core's poll, the event loop's request handler and the peer channel each note
when a Fetch or its data passes them, with ``time.time_ns()`` (one clock for every process on a
machine), and the process writes the events to FILE as JSON lines when it exits.
``benchmarks/bench_quorum.py`` joins the files of the three voters offset by offset into the
stages of one commit:

    leader append -> batch in the leader's log -> Fetch response ready on the leader's loop
    -> received by a follower's loop -> picked up by its poll -> follower fsync done
    -> next Fetch sent -> received by the leader's loop -> picked up by its poll -> commit

Recording is an ``append`` of a tuple to a list (no lock: ``list.append`` is atomic under the GIL),
and nothing at all when tracing is off (callers test ``TRACE is not None``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

# Event names (the second field of each event).
APPEND = "append"  # leader, in poll: schedule_append returned offsets [a, b]
# after a poll that moved the log end offset to a (a follower has fsynced the records by then;
# a leader answers the parked Fetches first and fsyncs in its next poll, as Kafka's leader does)
WRITTEN = "written"
FETCH_REQ_POLLED = "fetch_req_polled"  # leader poll: a Fetch from replica a at offset b
FETCH_RESP_POLLED = "fetch_resp_polled"  # follower poll: a Fetch response with data from a
FETCH_REQ_RECEIVED = "fetch_req_received"  # leader loop: a Fetch from replica a at offset b decoded
FETCH_RESP_READY = "fetch_resp_ready"  # leader loop: the core answered replica a with data from b
FETCH_REQ_SENT = "fetch_req_sent"  # follower loop: a Fetch at offset a is being sent
FETCH_RESP_RECEIVED = "fetch_resp_received"  # follower loop: a Fetch response with data from a
COMMITTED = "committed"  # leader poll: the commit notification up to offset a


class CommitTrace:
    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.events: list[tuple[int, str, int, int]] = []

    def note(self, event: str, a: int, b: int = 0) -> None:
        self.events.append((time.time_ns(), event, a, b))

    def dump(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            for ns, event, a, b in self.events:
                f.write(json.dumps({"ns": ns, "node": self.node_id, "event": event, "a": a, "b": b}))
                f.write("\n")


# The process's trace, or None (the default: nothing is recorded).
TRACE: CommitTrace | None = None


def enable(node_id: int) -> CommitTrace:
    global TRACE
    TRACE = CommitTrace(node_id)
    return TRACE


def records_base_offset(records: bytes) -> int:
    """The base offset of the first batch of a Fetch response's records (-1 if none)."""
    if len(records) < 12:
        return -1
    return int.from_bytes(records[:8], "big", signed=True)
