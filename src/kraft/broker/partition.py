"""One partition as this broker hosts it: its log, its role, and (as leader) its followers' progress.

Kafka's ``Partition``: the replica manager keeps one per hosted partition and changes its role when
a metadata delta makes this broker leader or follower (``kraft.metadata.publisher.local_changes``).
Sans-IO: the log is injected (``PartitionLogLike``: a file ``kraft.storage.partition_log.PartitionLog``
on a server, its in-memory twin in the simulator) and time comes in as ``now_ms``.

The rules it holds (``../shared/spec/dataplane.md`` section 5):

* **Follower progress (leader side).** Each follower fetch reports the follower's log end offset
  (its fetch offset). ``last_caught_up_ms`` is the time of the last fetch at which the follower had
  reached the leader's log end, or had reached the log end the leader had at its previous fetch
  (then the previous fetch's time): Kafka's ``Replica.updateFetchStateOrThrow``.
* **ISR.** A follower in the ISR whose ``now - last_caught_up_ms > replica.lag.time.max.ms`` is out
  of sync; a follower out of the ISR whose log end offset reached the high watermark and the start
  of the leader's epoch, *and* that caught up with the leader's log end within the lag time, is
  caught up. (Kafka checks only the first two, so under min ISR, where the high watermark is frozen,
  a follower that stopped fetching rejoins at once and leaves again a lag later: KAFKA-19996, whose
  fix is an open pull request. The simulator found this flapping here first.) The partition only
  *proposes* these changes: the ISR manager sends them to the controller as AlterPartition, and the
  ISR changes when the metadata says so.
  While a proposal that adds replicas is pending, the high watermark counts them (the *maximal* ISR:
  committed ISR plus pending additions), as Kafka does; the min-ISR checks use the committed ISR.
* **The strict high watermark (KIP-966 part 1).** The leader's high watermark is the least log end
  offset over the maximal ISR, and does not move at all while the committed ISR is smaller than the
  effective min ISR (``min(min.insync.replicas, replication factor)``). So every replica of ISR and
  ELR holds everything below the high watermark. It never moves backward on a leader.
* **Becoming leader** keeps the log as it is and records the new epoch at the log end; the high
  watermark stays what the log had (it may lag the old leader's) until the ISR has caught up again.
* **Becoming follower** keeps the log too: the first fetch carries ``LastFetchedEpoch`` and the
  leader answers ``DivergingEpoch`` when the logs differ, and the follower truncates then.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, Protocol

from kraft.metadata.image import TopicIdPartition
from kraft.metadata.partition import PartitionRegistration


class EpochEntryLike(Protocol):
    """One leader-epoch cache entry: the epoch and the offset where it starts."""

    @property
    def epoch(self) -> int: ...
    @property
    def start_offset(self) -> int: ...


class AppendInfoLike(Protocol):
    first_offset: int
    last_offset: int
    log_append_time_ms: int


class PartitionLogLike(Protocol):
    """What the broker core needs of a partition's log (``kraft.storage.partition_log``)."""

    @property
    def topic(self) -> str: ...
    @property
    def partition(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...

    @property
    def log_start_offset(self) -> int: ...
    @property
    def log_end_offset(self) -> int: ...
    @property
    def high_watermark(self) -> int: ...
    @property
    def latest_epoch(self) -> int | None: ...
    @property
    def epoch_entries(self) -> Sequence[EpochEntryLike]: ...
    def update_high_watermark(self, offset: int) -> bool: ...
    def set_high_watermark_after_truncation(self, offset: int) -> bool: ...
    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]: ...
    def assign_epoch_start(self, epoch: int, offset: int) -> None: ...
    def append_as_leader(
        self,
        batches: bytes,
        leader_epoch: int,
        *,
        now_ms: int,
        log_append_time: bool,
        max_message_bytes: int,
        origin_client: bool = True,
        compression: int | None = None,
    ) -> AppendInfoLike: ...
    def append_as_follower(self, batches: bytes) -> AppendInfoLike: ...
    def configure_segments(
        self,
        segment_bytes: int,
        segment_ms: int | None,
        index_interval_bytes: int | None = None,
        index_max_bytes: int | None = None,
    ) -> None: ...
    def read(
        self, fetch_offset: int, max_bytes: int, *, max_offset: int, min_one_batch: bool = True
    ) -> bytes: ...
    def offset_for_timestamp(self, timestamp_ms: int, *, max_offset: int) -> tuple[int, int, int] | None: ...
    def truncate_to(self, offset: int) -> bool: ...
    @property
    def unflushed_messages(self) -> int: ...
    @property
    def last_flush_ms(self) -> int: ...
    def flush(self, up_to: int | None = None, *, now_ms: int | None = None) -> None: ...
    def delete_old_segments(self, now_ms: int, retention_ms: int, retention_bytes: int) -> int: ...
    def truncate_fully_and_start_at(self, offset: int) -> None: ...


class QuietClock:
    """When a follower's fetch session was last read, and the follower's broker epoch then."""

    __slots__ = ("epoch", "ms")

    def __init__(self) -> None:
        self.ms = -1
        self.epoch = -1


class QuietHold(Protocol):
    """A fetch session's hold on a quiet partition (the replica manager's ``_Quiet``)."""

    @property
    def clock(self) -> QuietClock: ...
    def release(self) -> None:
        """Another fetch of the partition was recorded: the session must read it again."""


class QuietReader(Protocol):
    """A fetch session holding partitions quiet (the replica manager's ``_SessionReader``)."""

    touched: list[Partition]  # held partitions that moved since its last read
    replica_id: int  # the follower whose session it is
    eligible: bool  # whether that follower's broker may join an ISR (see ``Partition._take``)

    def live(self) -> bool:
        """Whether its session is still in use (else a partition may forget it)."""
        ...


class FollowerState:
    """A leader's view of one follower (Kafka's ``Replica``).

    While the follower's fetch session holds the partition quiet (caught up, nothing to send), its
    fetches of it are not recorded one by one: ``quiet`` is the session's hold, whose clock each
    read of the session moves, and the fetch times below count it (each such fetch asked for the
    log end, ``log_end_offset``, which stays the leader's while the partition is quiet). The hold
    ends with ``let_go`` (the session reads the partition again) or when another fetch of it is
    recorded (``on_fetch``: the hold is released, so the session reads it again too)."""

    __slots__ = (
        "_last_caught_up_ms",
        "_last_fetch_ms",
        "broker_epoch",
        "last_fetch_leader_end_offset",
        "log_end_offset",
        "quiet",
    )

    def __init__(self, *, last_caught_up_ms: int = 0) -> None:
        self.log_end_offset = -1  # unknown until it fetches in this leader epoch
        self._last_caught_up_ms = last_caught_up_ms
        self._last_fetch_ms = 0
        self.last_fetch_leader_end_offset = -1
        self.broker_epoch = -1
        self.quiet: QuietHold | None = None

    @property
    def last_caught_up_ms(self) -> int:
        q = self.quiet
        return self._last_caught_up_ms if q is None else max(self._last_caught_up_ms, q.clock.ms)

    @property
    def last_fetch_ms(self) -> int:
        q = self.quiet
        return self._last_fetch_ms if q is None else max(self._last_fetch_ms, q.clock.ms)

    def hold(self, hold: QuietHold) -> None:
        """A session holds the partition quiet from now on (the one holding it before lets go)."""
        self._end_hold(release=True)
        self.quiet = hold

    def let_go(self, hold: QuietHold) -> None:
        """``hold``'s session reads the partition again: its reads so far were fetches."""
        if self.quiet is hold:
            self._end_hold(release=False)

    def _end_hold(self, *, release: bool) -> None:
        q = self.quiet
        if q is None:
            return
        self.quiet = None
        clock = q.clock
        if clock.ms >= self._last_fetch_ms:
            # As on_fetch(log end, log end, clock.ms, clock.epoch): caught up at that fetch.
            self._last_caught_up_ms = max(self._last_caught_up_ms, clock.ms)
            self._last_fetch_ms = clock.ms
            self.broker_epoch = clock.epoch
        if release:
            q.release()

    def on_fetch(self, fetch_offset: int, leader_end_offset: int, now_ms: int, broker_epoch: int) -> None:
        if self.quiet is not None:
            self._end_hold(release=True)
        if fetch_offset >= leader_end_offset:
            self._last_caught_up_ms = max(self._last_caught_up_ms, now_ms)
        elif fetch_offset >= self.last_fetch_leader_end_offset >= 0:
            self._last_caught_up_ms = max(self._last_caught_up_ms, self._last_fetch_ms)
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_end_offset = leader_end_offset
        self._last_fetch_ms = now_ms
        self.broker_epoch = broker_epoch


class Partition:
    """One hosted partition (see the module docstring). Its role follows the latest registration."""

    def __init__(self, node_id: int, tp: TopicIdPartition, topic: str, log: PartitionLogLike) -> None:
        self.node_id = node_id
        self.tp = tp
        self.topic = topic
        self.index = tp.partition_id
        self.seq = 0  # its place in the replica manager's partitions (the order of their creation)
        self.log = log
        self.leader_id = -1
        # leader_id == node_id, kept with it (``_take``): read per partition by every scan of a
        # broker's partitions, where a property cost a tenth of the scan at 100,000.
        self.is_leader = False
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: tuple[int, ...] = ()
        self.isr: tuple[int, ...] = ()  # committed, from the metadata
        self.pending_isr: tuple[int, ...] | None = None  # proposed to the controller, not yet committed
        self.epoch_start_offset = 0  # where this broker's leadership epoch began
        self.followers: dict[int, FollowerState] = {}
        self.min_isr = 1  # effective: min(min.insync.replicas, replication factor)
        # Bumped by every change of leader, epoch, replicas or min ISR and when the broker stops
        # hosting it: a follower's fetch session skips a partition whose answer cannot have changed
        # (the replica manager's quiet partitions), and this is half of that "cannot". An ISR change
        # alone changes no follower's answer: it wakes only the sessions it makes unfit to hold the
        # partition (``_take``).
        self.role_version = 0
        # The fetch sessions that hold it quiet (the replica manager's session readers): told by
        # ``moved`` when its role, log end, high watermark or log start moves, then forgotten.
        self.watchers: list[QuietReader] | None = None

    @property
    def topic_id(self) -> uuid.UUID:
        return self.tp.topic_id

    # -- role changes ------------------------------------------------------------------------------

    def make_leader(self, p: PartitionRegistration, min_isr: int, now_ms: int) -> bool:
        """Lead ``p``; returns whether this is a new leadership (epoch) rather than an ISR update."""
        new_epoch = not self.is_leader or p.leader_epoch != self.leader_epoch
        self._take(p, min_isr)
        if new_epoch:
            log = self.log
            self.epoch_start_offset = log.log_end_offset
            latest = log.latest_epoch
            if latest is None or p.leader_epoch > latest:
                log.assign_epoch_start(p.leader_epoch, log.log_end_offset)
            # Followers start unknown; ISR members get a full lag period to show up.
            self.followers = {
                r: FollowerState(last_caught_up_ms=now_ms if r in p.isr else 0)
                for r in p.replicas
                if r != self.node_id
            }
            self.pending_isr = None
        else:
            for r in p.replicas:
                if r != self.node_id and r not in self.followers:
                    self.followers[r] = FollowerState()
            for r in list(self.followers):
                if r not in p.replicas:
                    del self.followers[r]
        return new_epoch

    def make_follower(self, p: PartitionRegistration, min_isr: int) -> bool:
        """Follow ``p``'s leader; returns whether the leader or epoch changed (fetching restarts)."""
        changed = self.is_leader or p.leader != self.leader_id or p.leader_epoch != self.leader_epoch
        self._take(p, min_isr)
        self.followers = {}
        self.pending_isr = None
        return changed

    def set_min_isr(self, min_isr: int) -> None:
        """The topic's effective min ISR changed (a config change)."""
        if min_isr != self.min_isr:
            self.min_isr = min_isr
            self.role_version += 1  # an answer that went by the old min ISR may differ now
            self.moved()

    def unhost(self) -> None:
        """This broker no longer hosts the partition: no fetch session may skip it."""
        self.role_version += 1
        self.moved()

    def watch(self, reader: QuietReader) -> None:
        """``reader`` holds the partition quiet: tell it when the partition moves."""
        watchers = self.watchers
        if watchers is None:
            self.watchers = [reader]
        elif reader not in watchers:
            watchers[:] = [r for r in watchers if r.live()]  # sessions gone since
            watchers.append(reader)

    def moved(self) -> None:
        """Its role, log end, high watermark or log start moved: the sessions holding it quiet read
        it again."""
        watchers = self.watchers
        if watchers is not None:
            self.watchers = None
            for reader in watchers:
                reader.touched.append(self)

    def _isr_moved(self, isr: Sequence[int]) -> None:
        """Only the ISR changed: a session keeps holding the partition quiet while its follower is
        in the ISR or cannot join it (as the replica manager holds them); the others read it again.
        (In a controlled shutdown most changes only take the stopping broker out of an ISR: waking
        every session for each made the leaders read each partition once more per follower.)"""
        watchers = self.watchers
        if watchers is None:
            return
        kept = []
        for reader in watchers:
            if reader.replica_id in isr or not reader.eligible:
                kept.append(reader)
            else:
                reader.touched.append(self)
        if len(kept) != len(watchers):
            self.watchers = kept or None

    def _take(self, p: PartitionRegistration, min_isr: int) -> None:
        if (
            p.leader == self.leader_id
            and p.leader_epoch == self.leader_epoch
            and min_isr == self.min_isr
            and self.replicas == tuple(p.replicas)
        ):
            self._isr_moved(p.isr)
        else:
            self.role_version += 1
            self.moved()
        if p.partition_epoch != self.partition_epoch:
            self.pending_isr = None  # the controller decided: the metadata's ISR is the truth again
        self.leader_id = p.leader
        self.is_leader = p.leader == self.node_id
        self.leader_epoch = p.leader_epoch
        self.partition_epoch = p.partition_epoch
        self.replicas = tuple(p.replicas)
        self.isr = tuple(p.isr)
        self.min_isr = min_isr

    # -- leader: ISR and the high watermark -------------------------------------------------------

    def maximal_isr(self) -> tuple[int, ...]:
        if self.pending_isr is None:
            return self.isr
        return self.isr + tuple(r for r in self.pending_isr if r not in self.isr)

    def under_min_isr(self) -> bool:
        return len(self.isr) < self.min_isr

    def maybe_advance_high_watermark(self) -> bool:
        """Move the high watermark to the least log end over the maximal ISR, unless the committed
        ISR is below min ISR (strict, KIP-966); returns whether it moved."""
        if not self.is_leader or self.under_min_isr():
            return False
        log = self.log
        hw = log.log_end_offset
        if log.high_watermark >= hw:
            return False  # at the log end already (every idle fetch of a caught-up follower)
        for r in self.maximal_isr():
            if r == self.node_id:
                continue
            state = self.followers.get(r)
            if state is None or state.log_end_offset < 0:
                return False  # an ISR member not heard from in this epoch: wait for it
            hw = min(hw, state.log_end_offset)
        if hw <= log.high_watermark:
            return False
        if log.update_high_watermark(hw):
            self.moved()
            return True
        return False

    def proposed_isr(
        self, now_ms: int, lag_time_max_ms: int, eligible: AbstractSet[int]
    ) -> tuple[int, ...] | None:
        """The ISR this leader wants now (out-of-sync members removed, caught-up replicas added), or
        None when it is the committed one. ``eligible``: replicas whose brokers may join (registered,
        unfenced, not shutting down)."""
        if not self.is_leader:
            return None
        isr, node_id, followers = self.isr, self.node_id, self.followers
        # The usual case answers None without building the tuples below: no member fell behind
        # (the rule of ``kept``, negated) and no replica out of the ISR may join (every one is in
        # it, or the ones out are not eligible: a broker in controlled shutdown still fetching every
        # partition it left). Building both tuples for each partition a scan looked at was a tenth
        # of a broker taking over leaderships in a 100,000-partition controlled shutdown.
        # (Building ``kept`` first and comparing kept most of the gain: 1.57-1.68 us a partition
        # against 1.19 here and 1.67 before.)
        for r in isr:
            if r != node_id and (
                (s := followers.get(r)) is None or now_ms - s.last_caught_up_ms > lag_time_max_ms
            ):
                break
        else:
            if not self.may_add(eligible):
                return None
        hw = self.log.high_watermark
        kept = tuple(
            r
            for r in self.isr
            if r == self.node_id
            or ((s := self.followers.get(r)) is not None and now_ms - s.last_caught_up_ms <= lag_time_max_ms)
        )
        added = tuple(
            r
            for r in self.replicas
            if r not in self.isr
            and r != self.node_id
            and r in eligible
            and (s := self.followers.get(r)) is not None
            and s.log_end_offset >= hw
            and s.log_end_offset >= self.epoch_start_offset
            # Caught up by the same clock that removes it (KAFKA-19996, an open Kafka PR): with the
            # high watermark frozen below min ISR, "reached the high watermark" alone would let a
            # follower that stopped fetching rejoin at once, and leave again a lag later.
            and now_ms - s.last_caught_up_ms <= lag_time_max_ms
        )
        proposal = kept + added
        return None if proposal == self.isr else proposal

    def may_add(self, eligible: AbstractSet[int]) -> bool:
        """Whether a replica out of the ISR (not this leader) is eligible: one that ``proposed_isr``
        could add once it has caught up."""
        isr, node_id = self.isr, self.node_id
        return any(r not in isr and r in eligible and r != node_id for r in self.replicas)

    def next_lag_deadline_ms(self, lag_time_max_ms: int) -> int | None:
        """When the first ISR follower will have lagged too long (if it does not fetch meanwhile)."""
        return earliest_lag_deadline_ms((self,), lag_time_max_ms)


def earliest_lag_deadline_ms(partitions: Iterable[Partition], lag_time_max_ms: int) -> int | None:
    """The earliest ``next_lag_deadline_ms`` of ``partitions`` (None: none has one), in one loop: the
    replica manager computes it over every led partition after each role change (a list and a
    call per partition made that 7 % of a broker taking over leaderships in a 100,000-partition
    controlled shutdown)."""
    # A follower's time is max(its own, its quiet hold's clock): the clock is not read when its own
    # time is already no earlier than the earliest so far (half the time of a loop that computed
    # each: 20 -> 10 ms for 50,000 led partitions, once per role change).
    earliest = _NO_DEADLINE
    for partition in partitions:
        isr = partition.isr
        for r, s in partition.followers.items():
            if r in isr:
                t = s._last_caught_up_ms
                if t < earliest:
                    q = s.quiet
                    if q is not None:
                        c = q.clock.ms
                        if c > t:
                            if c >= earliest:
                                continue
                            t = c
                    earliest = t
    return None if earliest == _NO_DEADLINE else earliest + lag_time_max_ms + 1


_NO_DEADLINE: Final = 1 << 62  # later than any time in ms
