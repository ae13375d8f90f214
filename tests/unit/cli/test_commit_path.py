"""The commit path breakdown joins the voters' trace events offset by offset."""

from __future__ import annotations

from typing import Any

import pytest

from kraft.cli.commit_path import STAGES, commit_path_stages
from kraft.common import commit_trace as ct

MS = 1_000_000  # ns


def ev(ns: float, node: int, event: str, a: int, b: int = 0) -> dict[str, Any]:
    return {"ns": int(ns * MS), "node": node, "event": event, "a": a, "b": b}


def chain(x: int, t: float, leader: int, follower: int, delays: list[float]) -> list[dict[str, Any]]:
    """The events of offset x's commit through ``follower``; stage i takes delays[i] ms."""
    times = [t]
    for d in delays:
        times.append(times[-1] + d)
    return [
        ev(times[0], leader, ct.APPEND, x, x),
        ev(times[1], leader, ct.WRITTEN, x + 1),
        ev(times[2], leader, ct.FETCH_RESP_READY, follower, x),
        ev(times[3], follower, ct.FETCH_RESP_RECEIVED, x),
        ev(times[4], follower, ct.FETCH_RESP_POLLED, x),
        ev(times[5], follower, ct.WRITTEN, x + 1),
        ev(times[6], follower, ct.FETCH_REQ_SENT, x + 1),
        ev(times[7], leader, ct.FETCH_REQ_RECEIVED, follower, x + 1),
        ev(times[8], leader, ct.FETCH_REQ_POLLED, follower, x + 1),
        ev(times[9], leader, ct.COMMITTED, x),
    ]


def test_each_stage_is_the_time_between_consecutive_events() -> None:
    delays = [0.2, 0.1, 0.3, 0.05, 0.4, 0.06, 0.25, 0.04, 0.07]
    events = [e for x in range(10, 20) for e in chain(x, 10.0 * x, 1, 2, delays)]
    out = commit_path_stages(events, leader=1)
    assert out["commits"] == 10
    names = [row["stage"] for row in out["stages"]]
    assert names[:-1] == list(STAGES)
    for row, d in zip(out["stages"], delays):
        assert row["p50_ms"] == pytest.approx(d, abs=1e-5)
    assert out["stages"][-1]["p50_ms"] == pytest.approx(sum(delays), abs=1e-5)


def test_the_follower_that_acknowledged_first_makes_the_commit() -> None:
    slow = [0.2, 0.1, 0.3, 0.05, 3.0, 0.06, 0.25, 0.04, 0.07]
    fast = [0.2, 0.1, 0.3, 0.05, 0.4, 0.06, 0.25, 0.04, 0.07]
    events = chain(5, 1.0, 1, 2, slow)
    # Follower 3's chain shares the leader's append, flush and commit events; only its own
    # events (and the leader's events about it) differ.
    f3 = [e for e in chain(5, 1.0, 1, 3, fast) if e["event"] not in (ct.APPEND, ct.WRITTEN) or e["node"] == 3]
    events = [e for e in events if e["event"] != ct.COMMITTED] + f3
    out = commit_path_stages(events, leader=1)
    assert out["commits"] == 1
    assert out["stages"][4]["p50_ms"] == pytest.approx(0.4, abs=1e-5)  # follower 3's fsync
    assert out["stages"][-1]["p50_ms"] == pytest.approx(sum(fast), abs=1e-5)


def test_broken_chains_and_multi_record_appends_are_left_out() -> None:
    delays = [0.1] * 9
    events = chain(1, 1.0, 1, 2, delays)
    broken = [e for e in chain(2, 5.0, 1, 2, delays) if e["event"] != ct.FETCH_REQ_SENT]
    # A later commit's events, more than a second on, are not borrowed by the broken chain.
    multi = [dict(e, b=4) if e["event"] == ct.APPEND else e for e in chain(3, 1500.0, 1, 2, delays)]
    out = commit_path_stages(events + broken + multi, leader=1)
    assert out["commits"] == 1
    assert commit_path_stages([], leader=1) == {"commits": 0, "stages": []}


def test_trace_records_nothing_until_enabled_and_dumps_json_lines(tmp_path: Any) -> None:
    assert ct.TRACE is None  # off by default: the hooks in the server cost one test each
    trace = ct.CommitTrace(4)
    trace.note(ct.APPEND, 7, 7)
    trace.note(ct.COMMITTED, 7)
    path = tmp_path / "trace.jsonl"
    trace.dump(path)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and '"event": "append"' in lines[0] and '"node": 4' in lines[0]
    assert ct.records_base_offset((42).to_bytes(8, "big") + b"\0" * 60) == 42
    assert ct.records_base_offset(b"") == -1
