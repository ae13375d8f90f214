"""The ``kafka.raft`` metric values (group ``raft-metrics``, spec section 10), computed from the
``now_ms`` the core is given: values only; the server exports them.

Windowed rates follow Kafka's default sampling: two 30 s samples, rate = events / elapsed window.
"""

from __future__ import annotations

import functools
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kraft.common.uuids import ZERO_UUID
from kraft.raft.states import Role

_ZERO_UUID_TEXT = str(ZERO_UUID)

# The roles as module globals: on_state compares them on every poll, and reading a member off its
# Enum class costs several times a global lookup.
_LEADER, _CANDIDATE, _PROSPECTIVE = Role.LEADER, Role.CANDIDATE, Role.PROSPECTIVE
_FOLLOWER, _UNATTACHED, _RESIGNED = Role.FOLLOWER, Role.UNATTACHED, Role.RESIGNED


@functools.lru_cache(maxsize=256)
def _uuid_text(value: uuid.UUID) -> str:
    """``str(value)``, remembered: on_state runs every poll and UUID.__str__ formats 32 digits."""
    return str(value)


if TYPE_CHECKING:
    from kraft.raft.log import ReplicatedLog
    from kraft.raft.node import RaftNode

WINDOW_MS = 30_000
SAMPLES = 2


@dataclass(slots=True)
class WindowedRate:
    """Events per second over the last ``SAMPLES`` windows of ``WINDOW_MS``."""

    events: deque[tuple[int, float]] = field(default_factory=deque)
    created_ms: int = 0

    def record(self, now_ms: int, amount: float) -> None:
        self.events.append((now_ms, amount))
        self._expire(now_ms)

    def _expire(self, now_ms: int) -> None:
        horizon = now_ms - WINDOW_MS * SAMPLES
        while self.events and self.events[0][0] <= horizon:
            self.events.popleft()

    def rate(self, now_ms: int) -> float:
        self._expire(now_ms)
        elapsed_ms = min(max(now_ms - self.created_ms, 1), WINDOW_MS * SAMPLES)
        # Like Kafka's Rate, never divide by less than one full window.
        elapsed_ms = max(elapsed_ms, WINDOW_MS * (SAMPLES - 1))
        return sum(a for _, a in self.events) * 1000.0 / elapsed_ms


@dataclass(slots=True)
class AvgMax:
    total: float = 0.0
    count: int = 0
    max: float = float("nan")

    def record(self, value: float) -> None:
        self.total += value
        self.count += 1
        self.max = value if self.count == 1 else max(self.max, value)

    @property
    def avg(self) -> float:
        return self.total / self.count if self.count else float("nan")


class RaftMetrics:
    """Plain values, refreshed by the core at each poll and transition."""

    def __init__(self, now_ms: int) -> None:
        self.current_state = "unattached"
        self.current_leader = -1
        self.current_vote = -1
        self.current_vote_directory_id = str(ZERO_UUID)
        self.current_epoch = 0
        self.high_watermark = -1
        self.log_end_offset = 0
        self.log_end_epoch = 0
        self.number_unknown_voter_connections = 0
        self._election = AvgMax()
        self._commit = AvgMax()
        self._append_records = WindowedRate(created_ms=now_ms)
        self._fetch_records = WindowedRate(created_ms=now_ms)
        self._election_started_ms: int | None = None
        self._state_seen: object = None  # the quorum state object on_state last read
        self._idle_ms = 0
        self._busy_ms = 0
        self._idle_ratio = AvgMax()
        self.last_poll_ms = now_ms
        self._last_wake_at_ms: int | None = None
        self._now_ms = now_ms
        self._directory_id: uuid.UUID | None = None  # the last UUID _directory_text formatted
        self._directory_id_text = _ZERO_UUID_TEXT

    # ---- derived values ------------------------------------------------------------------------

    @property
    def election_latency_avg(self) -> float:
        return self._election.avg

    @property
    def election_latency_max(self) -> float:
        return self._election.max

    @property
    def commit_latency_avg(self) -> float:
        return self._commit.avg

    @property
    def commit_latency_max(self) -> float:
        return self._commit.max

    @property
    def append_records_rate(self) -> float:
        return self._append_records.rate(self._now_ms)

    @property
    def fetch_records_rate(self) -> float:
        return self._fetch_records.rate(self._now_ms)

    @property
    def poll_idle_ratio_avg(self) -> float:
        return self._idle_ratio.avg

    # ---- updates from the core -------------------------------------------------------------------

    def on_state(self, node: RaftNode, now_ms: int) -> None:
        # Runs on every poll. Role, epoch, leader and vote are fixed for the life of a quorum state
        # object (a transition makes a new one), so they are read again only when it changed;
        # whether a follower is a voter (KIP-853), the HW and the log end are read every time.
        state = node.quorum.state
        if state is not self._state_seen:
            self._state_seen = state
            self._on_new_state(node, now_ms)
        elif state.role is _FOLLOWER:
            self.current_state = "follower" if node.is_voter else "observer"
        hw = node.high_watermark
        self.high_watermark = -1 if hw is None else hw
        log = node.log
        self.log_end_offset = log.end_offset()
        self.log_end_epoch = log.last_fetched_epoch()

    def _on_new_state(self, node: RaftNode, now_ms: int) -> None:
        role = node.role
        voted = None
        if role is _UNATTACHED:
            voted = node.voted_key  # only Unattached reports a vote
            state_name = "unattached" if voted is None else "voted"
        elif role is _FOLLOWER:
            state_name = "follower" if node.is_voter else "observer"
        elif role is _LEADER:
            state_name = "leader"
        elif role is _CANDIDATE:
            state_name = "candidate"
        elif role is _PROSPECTIVE:
            state_name = "prospective"
        else:
            state_name = "unattached"  # also Resigned
        self.current_state = state_name
        leader = node.leader_id
        self.current_leader = -1 if leader is None else leader
        self.current_epoch = node.epoch
        local_key = node.local_key
        if (role is _LEADER or role is _CANDIDATE) and local_key is not None:
            self.current_vote = local_key.id
            self.current_vote_directory_id = self._directory_text(local_key.directory_id)
        elif voted is not None:
            self.current_vote = voted.id
            self.current_vote_directory_id = self._directory_text(voted.directory_id)
        else:
            self.current_vote = -1
            self.current_vote_directory_id = _ZERO_UUID_TEXT
        # KIP-996: an election starts when the node becomes Prospective (Candidate without pre-vote).
        if role is _PROSPECTIVE or role is _CANDIDATE:
            if self._election_started_ms is None:
                self._election_started_ms = now_ms
        elif role is _LEADER or role is _FOLLOWER:
            if self._election_started_ms is not None:
                self._election.record(now_ms - self._election_started_ms)
            self._election_started_ms = None
        elif role is _RESIGNED:
            self._election_started_ms = None

    def _directory_text(self, directory_id: uuid.UUID) -> str:
        # Usually the same UUID object as last time (the local key, a vote): reuse its text
        # without hashing the UUID (UUID.__hash__ is Python code) for the shared cache.
        if directory_id is not self._directory_id:
            self._directory_id = directory_id
            self._directory_id_text = _uuid_text(directory_id)
        return self._directory_id_text

    def _update_log(self, log: ReplicatedLog) -> None:
        self.log_end_offset = log.end_offset()
        self.log_end_epoch = log.last_fetched_epoch()

    def on_leader_append(self, records: int, log: ReplicatedLog, now_ms: int) -> None:
        self._append_records.record(now_ms, records)
        self._update_log(log)

    def on_follower_append(self, records: int, log: ReplicatedLog, now_ms: int) -> None:
        self._fetch_records.record(now_ms, records)
        self._update_log(log)

    def on_commit(self, append_ms: int, records: int, now_ms: int) -> None:
        # Kafka records (commit time - append time) per batch, divided over its records.
        self._commit.record((now_ms - append_ms) / max(records, 1))

    def on_poll(self, node: RaftNode, now_ms: int, wake_at_ms: int) -> None:
        # Idle time: from the previous poll's return to this poll, bounded by the wake time asked for.
        if self._last_wake_at_ms is not None:
            gap = max(now_ms - self.last_poll_ms, 0)
            idle = min(gap, max(self._last_wake_at_ms - self.last_poll_ms, 0))
            if gap > 0:
                self._idle_ratio.record(idle / gap)
        self._last_wake_at_ms = wake_at_ms
        self.last_poll_ms = now_ms
        self._now_ms = now_ms
        self.on_state(node, now_ms)
