"""The broker's data plane, sans-IO: partition logs as leader and follower (Kafka's ``ReplicaManager``).

What it owns: the partitions this broker hosts (``kraft.broker.partition.Partition``), their roles
as the metadata deltas set them, and the data APIs on a broker listener:

* **Produce** (acks 0, 1, all): validated and appended by the leader (offsets assigned by rewriting
  the batch header, bytes kept as bytes). acks=all with the committed ISR below the effective min ISR
  is refused with NOT_ENOUGH_REPLICAS before anything is written; after the append the request waits
  in a purgatory until the high watermark passes its last offset (success), the ISR falls below min
  ISR (NOT_ENOUGH_REPLICAS_AFTER_APPEND), the leadership moves (NOT_LEADER_OR_FOLLOWER) or its
  ``timeout_ms`` passes (REQUEST_TIMED_OUT). The data stays in the log in every case, as in Kafka.
* **Fetch** from consumers (up to the high watermark) and followers (up to the log end; a follower's
  fetch offset is its log end, which moves the high watermark), with Kafka's long poll (answer when
  ``min_bytes`` are there or ``max_wait_ms`` passed), KIP-74 (at least one whole batch), leader-epoch
  fencing and ``DivergingEpoch`` for a fetcher whose ``LastFetchedEpoch`` is not on the leader's log;
  incremental fetch sessions (KIP-227) through ``kraft.broker.fetch_sessions``, long polls included.
* **ListOffsets** and **OffsetForLeaderEpoch** from the log and its epoch cache.
* **The replica fetcher**: for each leader this broker follows partitions of, one Fetch at a time
  (v17 with ``ReplicaState``: this broker's id and epoch; in a fetch session: a full fetch, then
  incremental ones listing only the partitions whose request changed), appending what comes back,
  truncating on ``DivergingEpoch``, taking ``min(leader high watermark, own log end)`` as its high watermark.
* **ISR proposals** for the ISR manager (``isr_proposals``): shrink by ``replica.lag.time.max.ms``,
  expand when caught up, from the followers' fetches.
* **Log reports for unclean recovery** (``leaderless_log_info``): the last written epoch and log end
  of each hosted partition that waits leaderless with nobody eligible, which the heartbeat carries.

Sans-IO: requests come in as ``ClientEnvelope``s, answers and fetcher requests go out through
``drain``; ``poll(now_ms)`` runs the timers (long polls, produce timeouts, fetch backoffs, the high
watermark checkpoint) and returns when to run again. The logs are injected (``LogProvider``).
Everything happens on the node's thread, in the node's order: the simulator drives it as the server.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from kraft.broker.fetch_sessions import (
    DEFAULT_CACHE_SLOTS,
    DEFAULT_EVICTION_MS,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    ContextKind,
    FetchContext,
    FetchSession,
    FetchSessionCache,
    PartitionAnswer,
    PartitionFetch,
    PartitionKey,
    next_epoch,
)
from kraft.broker.partition import (
    FollowerState,
    Partition,
    PartitionLogLike,
    QuietClock,
    earliest_lag_deadline_ms,
)
from kraft.broker.purgatory import Purgatory
from kraft.metadata.configs import TOPIC, ConfigResolver, effective_min_isr
from kraft.metadata.image import MetadataDelta, MetadataImage, TopicIdPartition
from kraft.metadata.partition import PartitionRegistration
from kraft.metadata.publisher import local_changes
from kraft.metadata.replica_log_info import ReplicaLogInfo, awaits_recovery, last_written_epoch
from kraft.protocol.envelope import NO_RESPONSE, ApiRequest, ApiResponse, ClientEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import describe_log_dirs, fetch, list_offsets, offset_for_leader_epoch, produce
from kraft.records.batch import Compression, peek_batch_size

log = logging.getLogger("kraft.broker.replica_manager")

CONSUMER_REPLICA_ID: Final = -1
DEBUGGING_REPLICA_ID: Final = -2
FETCH_VERSION: Final = 17  # what the replica fetcher asks for (the network shell negotiates down)
LATEST_TIMESTAMP: Final = -1
EARLIEST_TIMESTAMP: Final = -2
MAX_TIMESTAMP: Final = -3
EARLIEST_LOCAL_TIMESTAMP: Final = -4
LATEST_TIERED_TIMESTAMP: Final = -5
# The APIs a broker with partition storage answers here rather than in ``ClientApis``.
DATA_API_KEYS: Final = frozenset(
    (
        produce.API.key,
        fetch.API.key,
        list_offsets.API.key,
        offset_for_leader_epoch.API.key,
        describe_log_dirs.API.key,
    )
)
_FETCH: Final = "fetch"
# Kafka's compression.type values (BrokerCompressionType); "producer" (and anything unknown, which
# the controller refuses at config time) keeps the producer's codec.
_COMPRESSION_TYPES: Final = {
    "uncompressed": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,
}


class LogProvider(Protocol):
    """Where partition logs come from (``kraft.storage.log_manager.LogManager`` on a server)."""

    def get_or_create(self, topic: str, partition: int, topic_id: uuid.UUID) -> PartitionLogLike: ...
    def delete(self, topic: str, partition: int) -> None: ...
    def checkpoint(self) -> None: ...
    def log_dir_states(self) -> Sequence[tuple[str, int, int, Sequence[PartitionLogLike]]]:
        """Each log directory: its path, the volume's total and usable bytes (-1: unknown) and the
        logs in it (DescribeLogDirs)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaConfig:
    """Kafka's replication settings (broker properties of the same names)."""

    replica_lag_time_max_ms: int = 30_000  # replica.lag.time.max.ms
    fetch_wait_max_ms: int = 500  # replica.fetch.wait.max.ms
    fetch_min_bytes: int = 1  # replica.fetch.min.bytes
    fetch_max_bytes: int = 1_048_576  # replica.fetch.max.bytes (per partition)
    fetch_response_max_bytes: int = 10_485_760  # replica.fetch.response.max.bytes
    fetch_backoff_ms: int = 1_000  # replica.fetch.backoff.ms
    hw_checkpoint_interval_ms: int = 5_000  # replica.high.watermark.checkpoint.interval.ms
    retention_check_interval_ms: int = 300_000  # log.retention.check.interval.ms
    request_timeout_ms: int = 30_000  # how long a fetcher waits for its leader's answer
    inter_broker_listener: str = "PLAINTEXT"  # inter.broker.listener.name
    fetch_session_cache_slots: int = DEFAULT_CACHE_SLOTS  # max.incremental.fetch.session.cache.slots
    fetch_session_eviction_ms: int = DEFAULT_EVICTION_MS  # min.incremental.fetch.session.eviction.ms
    # For the simulator and tests: at every read of a follower's fetch session, check that no
    # partition it holds quiet moved without telling it (``Partition.moved``); AssertionError if one did.
    check_quiet: bool = False


_NEVER: Final = 9223372036854775807  # Long.MAX_VALUE: Kafka's "never" for flush.messages and flush.ms


@dataclass(frozen=True, slots=True)
class _TopicConfig:
    max_message_bytes: int
    log_append_time: bool
    flush_messages: int
    flush_ms: int
    retention_ms: int
    retention_bytes: int
    compression: int | None  # compression.type as a codec id; None = "producer" (keep the producer's)
    segment_bytes: int
    segment_ms: int
    index_interval_bytes: int
    index_max_bytes: int  # segment.index.bytes


class ProduceError(Exception):
    """A partition's append refused (``error_code`` is Kafka's)."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.error_code = code
        self.message = message


@dataclass(slots=True, eq=False)
class _PartitionProduce:
    index: int
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    required_offset: int = -1  # acks=all: the high watermark this append waits for
    partition: Partition | None = None
    leader_hint: tuple[int, int] | None = None  # (leader id, leader epoch) with NOT_LEADER_OR_FOLLOWER


@dataclass(slots=True, eq=False)
class _DelayedProduce:
    envelope: ClientEnvelope
    version: int
    topics: list[tuple[str, uuid.UUID, list[_PartitionProduce]]]
    deadline_ms: int


# New partitions a broker takes per poll of its node, publishes included (opening or creating
# each one's log, about 0.7 ms when new): a delta of 10,000 new partitions held a broker's event
# loop for 15 s, past its session timeout, so every broker was fenced. More wait for the next polls
# (retriable errors meanwhile). The budget is per poll, not per publish: one poll can deliver many
# committed batches (15 CreateTopics of 1,000 partitions each), and a budget for each had all three
# brokers fenced again.
NEW_PARTITIONS_PER_POLL = 256


class _QuietRow:
    """A Fetch answer row being filled, built into the generated class only if it is kept."""

    __slots__ = (
        "current_leader",
        "diverging_epoch",
        "error_code",
        "high_watermark",
        "last_stable_offset",
        "log_start_offset",
        "partition_index",
        "records",
    )

    def __init__(self, partition_index: int) -> None:
        self.partition_index = partition_index
        self.error_code = 0
        self.high_watermark = -1
        self.last_stable_offset = -1
        self.log_start_offset = -1
        self.records = b""
        self.current_leader: Any = None
        self.diverging_epoch: Any = None

    def build(self, part_cls: Any) -> Any:
        row = part_cls(
            partition_index=self.partition_index,
            error_code=self.error_code,
            high_watermark=self.high_watermark,
            last_stable_offset=self.last_stable_offset,
            log_start_offset=self.log_start_offset,
            records=self.records,
        )
        if self.current_leader is not None:
            row.current_leader = self.current_leader
        if self.diverging_epoch is not None:
            row.diverging_epoch = self.diverging_epoch
        return row


@dataclass(slots=True, eq=False)
class _DelayedFetch:
    envelope: ClientEnvelope
    version: int
    body: Any  # as read: an incremental fetch's is rebuilt from its session at each re-read
    request: Any  # as received
    deadline_ms: int
    partitions: frozenset[TopicIdPartition]  # what it reads: re-read only when one of them moved
    context: FetchContext  # its fetch session's part (KIP-227): how the answer is cut down
    follower: bool  # a replica's: reads to the log end, so only an append can complete it


@dataclass(slots=True)
class _Fetcher:
    """The replica fetcher of one leader broker."""

    leader_id: int
    in_flight: int | None = None  # correlation id
    deadline_ms: int = 0
    not_before_ms: int = 0
    # Its fetch session with the leader (KIP-227, Kafka's FetchSessionHandler): the next request's
    # SessionId and SessionEpoch (epoch 0: a full fetch that asks for a new session, closing
    # ``session_id`` if not 0) and each partition's request as the leader's session has it.
    session_id: int = INVALID_SESSION_ID
    session_epoch: int = INITIAL_EPOCH
    # Keyed by the Partition object (an identity hash: a TopicIdPartition hashes its UUID in Python,
    # and an idle follower's fetch looked up every followed partition). With a fetch in flight this
    # is what it asked for; an answer for a partition whose entry is _RESTARTED is dropped.
    session: dict[Partition, PartitionFetch] = field(default_factory=dict)
    # Partitions whose request may differ from the session's since the last Fetch: answered ones
    # (their log moved), and ones whose role changed (new here, restarted, led or gone). The next
    # Fetch checks only these (a follower's session holds thousands, and during a controlled
    # shutdown each of the many fetches re-checked all of them); every one after a full fetch, a
    # retention pass (log starts move) or a change of fetch.max.bytes.
    dirty: dict[Partition, None] = field(default_factory=dict)
    checked: tuple[int, int] = (-1, -1)  # (retention passes, max bytes) when all were last checked

    def session_failed(self, code: int | None = None) -> None:
        """A session error (or no answer): a full fetch next, a new session asked for (Kafka's
        ``handleError``/``handleResponse``: the id is dropped when the leader no longer knows it)."""
        if code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND:
            self.session_id = INVALID_SESSION_ID
        self.session_epoch = INITIAL_EPOCH

    def session_answered(self, session_id: int) -> None:
        """An answer without a top-level error: the session is opened, continued or gone."""
        if session_id == INVALID_SESSION_ID:
            self.session_id, self.session_epoch = INVALID_SESSION_ID, INITIAL_EPOCH
        elif self.session_epoch == INITIAL_EPOCH:
            self.session_id, self.session_epoch = session_id, next_epoch(INITIAL_EPOCH)
        else:
            self.session_epoch = next_epoch(self.session_epoch)


class ReplicaManager:
    """See the module docstring.

    Args:
        node_id: this broker.
        logs: opens and deletes partition logs.
        resolver: resolves topic configs (``min.insync.replicas``, ``max.message.bytes``,
            ``message.timestamp.type``) against the image and this broker's static properties.
        next_correlation_id: ids of this broker's requests (shared with its other parts).
        new_session_id: ids of new fetch sessions (KIP-227; any int: the cache retries until it
            gets a positive one not in use). Default: a counter from 1.
    """

    def __init__(
        self,
        *,
        node_id: int,
        logs: LogProvider,
        resolver: ConfigResolver,
        config: ReplicaConfig | None = None,
        next_correlation_id: Callable[[], int],
        new_session_id: Callable[[], int] | None = None,
    ) -> None:
        self.node_id = node_id
        self.logs = logs
        self.resolver = resolver
        self.config = config or ReplicaConfig()
        self._next_correlation_id = next_correlation_id
        self._image = MetadataImage.EMPTY
        self.partitions: dict[TopicIdPartition, Partition] = {}
        # The same by topic id, then partition: a fetch looks its partitions up here (a
        # TopicIdPartition made and hashed per partition per fetch was 5 % of a broker reading
        # 100,000-partition fetch sessions).
        self._by_topic: dict[uuid.UUID, dict[int, Partition]] = {}
        self._fetchers: dict[int, _Fetcher] = {}
        self._fetcher_of: dict[int, int] = {}  # correlation id -> leader id
        self._produces: Purgatory[TopicIdPartition, _DelayedProduce] = Purgatory()
        self._fetches: Purgatory[str, _DelayedFetch] = Purgatory()
        self.fetch_sessions = FetchSessionCache(
            new_session_id=new_session_id or itertools.count(1).__next__,
            max_slots=self.config.fetch_session_cache_slots,
            eviction_ms=self.config.fetch_session_eviction_ms,
        )
        self._outbound: list[ClientEnvelope] = []
        # What moved since waiting requests were last checked: partitions whose data, high watermark
        # or ISR moved, or everything (roles or configs changed).
        self._changed: set[TopicIdPartition] = set()
        self._led_changed: list[Partition] = []  # led anew or changed since the last _roles_taken
        self._appended: set[TopicIdPartition] = set()  # led partitions with new records (follower fetches)
        self._all_changed = False
        self._topic_configs: dict[str, _TopicConfig] = {}
        self._flush_ms_topics: dict[str, int] | None = None  # see _flush_ms_by_topic
        # min.insync.replicas by topic, resolved once per configs (see ``publish``): a delta that
        # moves thousands of partitions (a controlled shutdown) resolved it for each (half of a
        # broker's publish).
        self._min_isrs: dict[str, int] = {}
        # (segment.bytes, segment.ms, index.interval.bytes, segment.index.bytes) each open log was
        # last given.
        self._segment_configs: dict[TopicIdPartition, tuple[int, int | None, int, int]] = {}
        self._next_checkpoint_ms = 0
        self._next_retention_ms = 0
        # After the metadata moved roles (a delta, new roles taken), isr_proposals answers what a
        # scan of every led partition would: it scanned them all until the 100,000-partition stop
        # measured it (14 % of a broker taking over leaderships: one scan per delta). It looks at
        # the few whose answer can differ from the last time instead, unless the scan must be
        # whole (``_isr_full``: activation, a config change; or the eligible brokers changed, or a
        # follower's lag deadline may have passed). What can make an unchanged led partition's
        # ``proposed_isr`` go from None to an ISR, and where it is caught:
        # - its role, epoch, ISR or replicas changed (``_take``): ``_isr_recheck`` (``_roles_taken``);
        # - its pending AlterPartition ended (``isr_recheck``, from the ISR manager);
        # - a member lagged too long: only at or past the earliest lag deadline, which
        #   ``_isr_lag_bound`` bounds from below (see there);
        # - a replica out of the ISR caught up: every led partition with an eligible replica out of
        #   its ISR is looked at (``_isr_expandable``; a fetch at the high watermark or the quiet
        #   hold of a fetch session can catch it up);
        # - a broker became eligible: a whole scan.
        # (A partition the ISR manager set aside is in one of these still: an expansion has an
        # eligible replica out of its ISR, a shrink a passed deadline.) They are taken in
        # ``self.partitions`` order (``Partition.seq``): the proposals are the whole scan's, in its
        # order (test_replica_manager.py compares them after random deltas).
        self._isr_dirty = False  # the metadata moved roles since the last isr_proposals
        self._isr_full = False  # ... and the next one looks at every led partition
        self._isr_check_ms = 0
        self._isr_recheck: dict[Partition, None] = {}
        self._isr_expandable: dict[Partition, None] = {}
        self._isr_eligible: frozenset[int] | None = None  # the eligible brokers of the last whole scan
        self._partition_seq = 0  # Partition.seq: the order of ``self.partitions``
        # Led partitions a follower out of their ISR may have caught up with (its fetch reached the
        # high watermark), looked at by the next isr_proposals: the one partition, as Kafka's
        # maybeExpandIsr on each follower fetch. (Each such fetch made the next call look at every
        # led partition: a broker in controlled shutdown, out of every ISR and still fetching, had
        # the others scan 15,000 partitions per poll.)
        self._isr_candidates: dict[Partition, None] = {}
        # The brokers that may join an ISR (``is_active``) as of ``_eligible_of`` (an image's
        # brokers): a fetch session holds a partition quiet for a follower in its ISR or for one
        # that cannot join it (see ``_read``).
        self._eligible: frozenset[int] = frozenset()
        self._eligible_of: object = None
        self._readers_eligible: frozenset[int] = frozenset()  # as the session readers were last told
        self._retention_passes = 0
        # (layout version, followed by leader): see ``_followed_by_leader``.
        self._roles_cache: tuple[int, dict[int, list[Partition]]] = (-1, {})
        # Every hosted partition in (topic, partition) order, for ``_followed_by_leader``: those created since
        # the last pass are sorted in then (Timsort merges the new run), unhosted ones dropped. A
        # full sort per role change cost a broker with 100,000 partitions a tenth of its
        # controlled shutdown.
        self._ordered: list[Partition] = []
        self._ordered_added = False
        self._ordered_removed = False
        # Bumped only when what ``_followed_by_leader`` reads moves: a partition hosted or dropped,
        # or a leader changed (a delta that only moves ISRs, most of a controlled shutdown's, leaves
        # it).
        self._layout_version = 0
        # What the per-poll work needs of the roles, kept as they change (``_unrole``/``_enrole``)
        # instead of ``_followed_by_leader``'s pass over every hosted partition after each leader
        # change (10 % of a broker's CPU in its own 100,000-partition controlled shutdown): the led
        # partitions, and per followed leader how many partitions and a heap of them by (topic,
        # partition) (stale entries are dropped when they reach the top), whose tops give the
        # leaders in the order that pass lists them. Its lists are built only for a full fetch.
        self._led: dict[Partition, None] = {}
        self._following: dict[int, _Following] = {}
        self._pushes = itertools.count()
        # (roles version, a lower bound of the earliest follower lag deadline): followers' caught-up
        # times only move forward between role changes, so the deadline computed once stays a
        # lower bound (waking early just computes it again).
        self._lag_wake: tuple[int, int | None] = (-1, None)
        # Bumped by every role change (activate, publish, stop): ``_lag_wake`` is computed again.
        self._roles_version = 0
        # (valid, a lower bound of the earliest lag deadline, None for none) for isr_proposals:
        # ``_lag_wake``'s last value with the deadlines of the partitions whose roles changed since
        # folded in (``_roles_taken``), so it stays a bound between the polls that compute
        # ``_lag_wake`` again. (That one is exact when computed: the poll's wake, and so the
        # simulator's traces, depend on it.)
        self._isr_lag_bound: tuple[bool, int | None] = (False, None)
        # Partitions this broker hosts whose roles are taken in later polls (``_take_pending``):
        # a delta that brings more than ``NEW_PARTITIONS_PER_POLL`` new ones is taken in slices.
        self._pending: dict[TopicIdPartition, None] = {}
        self._new_budget = NEW_PARTITIONS_PER_POLL  # what this poll may still take (reset by poll)
        self.active = False  # roles are taken once the broker caught up with its registration
        self.closing = False  # in controlled shutdown: no partition is opened or created any more
        self.broker_epoch = -1
        self.now_ms = 0

    # -- metadata ----------------------------------------------------------------------------------

    def activate(self, now_ms: int) -> None:
        """Take the roles the current image gives this broker, and follow every later delta.

        Called once the broker's metadata has caught up with its own registration (the lifecycle's
        RECOVERY): a restarted broker must not act on the image it had before the controller saw
        it come back (after an unclean stop the controller takes its leaderships and ELR places
        away at registration; acting on the older image would make it lead with a log that lost
        its unflushed tail). Kafka installs its replica manager's publisher at the same point.
        """
        if self.active:
            return
        self.active = True
        self.now_ms = now_ms
        image = self._image
        for topic in image.topics_by_id.values():
            for index, p in sorted(topic.partitions.items()):
                if self.node_id in p.replicas:
                    self._take_role(TopicIdPartition(topic.id, index), p, image, now_ms)
        self._all_changed = True
        self._isr_dirty = True
        self._isr_full = True
        self._isr_lag_bound = (False, None)
        self._roles_version += 1

    def _take_role(
        self, tp: TopicIdPartition, p: PartitionRegistration, image: MetadataImage, now_ms: int
    ) -> None:
        """Lead or follow ``p`` as the image says; a partition without a ``Partition`` yet (its log
        to open or create) is taken only while this poll's budget lasts, else queued for a later
        poll."""
        if tp not in self.partitions:
            if self.closing:
                return
            if self._new_budget <= 0 or tp in self._pending:
                self._pending[tp] = None
                return
            self._new_budget -= 1
        if p.leader == self.node_id:
            partition = self._partition(tp, image)
            newly = not partition.is_leader
            if newly:
                self._refetch(partition)  # a fetcher following it forgets it
                self._layout_version += 1
                self._unrole(partition, False, partition.leader_id)
            partition.make_leader(p, self._min_isr(image, tp, p), now_ms)
            if newly:
                self._enrole(partition)
            self._led_changed.append(partition)
        else:
            self._fetch_from_if_changed(self._partition(tp, image), p, image)

    def stop_opening_partitions(self) -> None:
        """The broker began its controlled shutdown: partitions it hosts already follow their
        roles (their leadership moves away), but the ones still queued, and any a later delta
        brings, are not opened: their logs would be created only to be closed seconds later, on
        the CPU the brokers taking over the leaderships need. Nothing is at risk: a replica without
        a ``Partition`` fetches nothing, so a leader's high watermark waits until the controller
        has taken this broker out of the ISR, which its controlled shutdown does."""
        self.closing = True
        self._pending.clear()

    @property
    def has_pending_roles(self) -> bool:
        """Partitions wait for their roles to be taken (the next poll takes more)."""
        return bool(self._pending)

    def _take_pending(self, now_ms: int) -> bool:
        """Take the next slice of queued roles (from the current image); whether any remain."""
        image = self._image
        while self._pending and self._new_budget > 0:
            tp = next(iter(self._pending))
            del self._pending[tp]
            p = image.partition(tp.topic_id, tp.partition_id)
            if p is not None and self.node_id in p.replicas:
                self._take_role(tp, p, image, now_ms)
        self._roles_taken()
        return bool(self._pending)

    def _roles_taken(self, *, every_leader: bool = False) -> None:
        """After roles were taken: the high watermarks of the partitions led anew or changed (of
        every led partition with ``every_leader``: a min ISR may have moved), and everything that
        waits or scans on roles looks again. (Each delta scanned every led partition: 10,000 per
        ISR change of one, and per slice of new partitions.)"""
        led = self.partitions.values() if every_leader else self._led_changed
        lag = self.config.replica_lag_time_max_ms
        recheck = self._isr_recheck
        valid, bound = self._isr_lag_bound
        for partition in led:
            if partition.is_leader:
                partition.maybe_advance_high_watermark()
                recheck[partition] = None
                if valid:
                    bound = _earliest(bound, partition.next_lag_deadline_ms(lag))
        self._isr_lag_bound = (valid, bound)
        self._led_changed = []
        self._all_changed = True
        self._isr_dirty = True
        if every_leader:
            self._isr_full = True
        self._roles_version += 1

    def isr_recheck(self, partitions: Iterable[Partition]) -> None:
        """Their pending ISR change ended (answered or lost): the next scan looks at them again."""
        for partition in partitions:
            self._isr_recheck[partition] = None

    def _fetch_from_if_changed(
        self, partition: Partition, p: PartitionRegistration, image: MetadataImage
    ) -> None:
        leader, was_leader = partition.leader_id, partition.is_leader
        if partition.make_follower(p, self._min_isr(image, partition.tp, p)):
            self._fetch_from(partition)
        if partition.leader_id != leader:
            self._layout_version += 1
            self._unrole(partition, was_leader, leader)
            self._enrole(partition)

    def _unrole(self, partition: Partition, was_leader: bool, leader_id: int) -> None:
        """``partition`` led (``was_leader``) or followed ``leader_id`` until now (see ``_led``)."""
        if was_leader:
            self._led.pop(partition, None)
        elif leader_id >= 0 and leader_id != self.node_id:
            following = self._following.get(leader_id)
            if following is not None:
                following.count -= 1

    def _enrole(self, partition: Partition) -> None:
        """``partition`` leads or follows as its attributes say now (see ``_led``)."""
        if partition.is_leader:
            self._led[partition] = None
            return
        leader_id = partition.leader_id
        if leader_id < 0 or leader_id == self.node_id:
            return
        following = self._following.get(leader_id)
        if following is None:
            following = self._following[leader_id] = _Following()
        following.count += 1
        heap = following.heap
        heapq.heappush(heap, (partition.topic, partition.index, next(self._pushes), partition))
        if len(heap) > 2 * following.count + 64:  # mostly stale entries: rebuilt from the live ones
            heap[:] = [e for e in heap if self._follows(e[3], leader_id)]
            heapq.heapify(heap)

    def _follows(self, partition: Partition, leader_id: int) -> bool:
        return (
            not partition.is_leader
            and partition.leader_id == leader_id
            and self.partitions.get(partition.tp) is partition
        )

    def _followed_leaders(self) -> list[int]:
        """The leaders this broker follows partitions of, in the order ``_followed_by_leader`` lists them (by
        their first partition in (topic, partition) order)."""
        firsts = []
        for leader_id, following in list(self._following.items()):
            if following.count <= 0:
                del self._following[leader_id]
                continue
            heap = following.heap
            while heap and not self._follows(heap[0][3], leader_id):
                heapq.heappop(heap)
            if heap:  # (always, while the count is right)
                firsts.append((heap[0][0], heap[0][1], leader_id))
        firsts.sort()
        return [leader_id for _, _, leader_id in firsts]

    def publish(self, delta: MetadataDelta, image: MetadataImage) -> None:
        """A ``MetadataPublisher``: follow the roles ``delta`` gives this broker (once active)."""
        self._image = image
        self._update_eligible(image)
        configs_changed = image.configs is not delta.previous.configs
        if configs_changed or delta.topic_names_changed:
            # What is resolved by topic name depends on the configs alone, and the flush.ms topics
            # on the names too: kept across deltas that only move partitions (every slice of a
            # controlled shutdown resolved 1,000 topics' flush.ms again).
            self._topic_configs.clear()
            self._min_isrs.clear()
            self._flush_ms_topics = None
        if not self.active:
            return
        changes = local_changes(delta, self.node_id)
        if changes.empty and not configs_changed:
            return
        now_ms = self.now_ms
        for tp, name in changes.deletes.items():
            self._pending.pop(tp, None)
            self._stop(tp, name)
        for tp, p in changes.leaders.items():
            self._take_role(tp, p, image, now_ms)
        for tp, p in changes.followers.items():
            if self.closing and (p.leader < 0 or self.node_id not in p.isr):
                self._stop_replica(tp)
            else:
                self._take_role(tp, p, image, now_ms)
        every_leader = False
        if configs_changed:
            every_leader = True
            for tp, partition in self.partitions.items():
                now = image.partition(tp.topic_id, tp.partition_id)
                if now is not None:
                    partition.set_min_isr(self._min_isr(image, tp, now))
                self._configure_segments(partition)
        self._roles_taken(every_leader=every_leader)

    def _eligible_brokers(self, image: MetadataImage) -> frozenset[int]:
        """The brokers of ``image`` that may join an ISR (unfenced, not in controlled shutdown)."""
        if image.brokers is not self._eligible_of:
            self._eligible_of = image.brokers
            self._eligible = frozenset(b.id for b in image.brokers.values() if b.is_active)
        return self._eligible

    def _update_eligible(self, image: MetadataImage) -> None:
        """Tell the followers' session readers whose broker may join ISRs now or no longer. One that
        may again (unfenced, or out of controlled shutdown with the same epoch) is read again where
        its session held a partition quiet outside the ISR, so that its fetches make it a candidate
        for the ISR as before (``_read``)."""
        before = self._readers_eligible
        now = self._readers_eligible = self._eligible_brokers(image)
        if now == before:
            return
        for session in self.fetch_sessions.sessions.values():
            reader = session.reader
            if isinstance(reader, _SessionReader):
                reader.eligible = reader.replica_id in now
                if reader.eligible and reader.replica_id not in before:
                    reader.wake_outside_isr()

    def _partition(self, tp: TopicIdPartition, image: MetadataImage) -> Partition:
        partition = self.partitions.get(tp)
        if partition is None:
            topic = image.topics_by_id[tp.topic_id]
            log_ = self.logs.get_or_create(topic.name, tp.partition_id, tp.topic_id)
            partition = Partition(self.node_id, tp, topic.name, log_)
            partition.seq = self._partition_seq
            self._partition_seq += 1
            self.partitions[tp] = partition
            self._by_topic.setdefault(tp.topic_id, {})[tp.partition_id] = partition
            self._ordered.append(partition)
            self._ordered_added = True
            self._layout_version += 1
            self._configure_segments(partition)
        return partition

    def _configure_segments(self, partition: Partition) -> None:
        """Hand the log its topic's segment.bytes, segment.ms and index configs when they differ
        from what it has."""
        config = self._topic_config(partition.topic)
        wanted = (
            config.segment_bytes,
            config.segment_ms,
            config.index_interval_bytes,
            config.index_max_bytes,
        )
        if self._segment_configs.get(partition.tp) != wanted:
            partition.log.configure_segments(*wanted)
            self._segment_configs[partition.tp] = wanted

    def _stop_replica(self, tp: TopicIdPartition) -> None:
        """In controlled shutdown, a partition this broker follows out of its ISR (or that has no
        leader) is no longer replicated or served here; its log stays (Kafka's ``applyDelta`` since
        KAFKA-13858 stops such replicas the same way). Fetching on would only cost the new leaders,
        which read the partition on each of its fetches until the broker stopped."""
        if tp in self.partitions:
            self._unhost(tp)

    def _stop(self, tp: TopicIdPartition, name: str) -> None:
        partition = self._unhost(tp)
        if partition is not None:
            log.info(
                "broker %d: no longer hosts %s-%d: deleting its log", self.node_id, name, tp.partition_id
            )
        self.logs.delete(name, tp.partition_id)

    def _unhost(self, tp: TopicIdPartition) -> Partition | None:
        self._roles_version += 1
        partition = self.partitions.pop(tp, None)
        in_topic = self._by_topic.get(tp.topic_id)
        if in_topic is not None:
            in_topic.pop(tp.partition_id, None)
            if not in_topic:
                del self._by_topic[tp.topic_id]
        self._ordered_removed = True
        self._layout_version += 1
        self._segment_configs.pop(tp, None)
        if partition is not None:
            self._unrole(partition, partition.is_leader, partition.leader_id)
            partition.unhost()
            self._refetch(partition)
        return partition

    def _min_isr(self, image: MetadataImage, tp: TopicIdPartition, p: PartitionRegistration) -> int:
        assert image is self._image  # the cache below holds this image's configs' values
        name = image.topics_by_id[tp.topic_id].name
        configured = self._min_isrs.get(name)
        if configured is None:
            configured = self._min_isrs[name] = self.resolver.topic_min_isr(image, name)
        return effective_min_isr(configured, len(p.replicas))

    def _topic_config(self, topic: str) -> _TopicConfig:
        """The configs of ``topic`` the data path reads, resolved once per configs (see ``publish``)."""
        cached = self._topic_configs.get(topic)
        if cached is None:
            image, r = self._image, self.resolver
            max_bytes = int(r.value(image, TOPIC, topic, "max.message.bytes") or "1048588")
            ts_type = (r.value(image, TOPIC, topic, "message.timestamp.type") or "CreateTime").strip()
            cached = _TopicConfig(
                max_message_bytes=max_bytes,
                log_append_time=ts_type == "LogAppendTime",
                flush_messages=int(r.value(image, TOPIC, topic, "flush.messages") or _NEVER),
                flush_ms=int(r.value(image, TOPIC, topic, "flush.ms") or _NEVER),
                retention_ms=int(r.value(image, TOPIC, topic, "retention.ms") or "604800000"),
                retention_bytes=int(r.value(image, TOPIC, topic, "retention.bytes") or "-1"),
                segment_bytes=int(r.value(image, TOPIC, topic, "segment.bytes") or "1073741824"),
                segment_ms=int(r.value(image, TOPIC, topic, "segment.ms") or "604800000"),
                index_interval_bytes=int(r.value(image, TOPIC, topic, "index.interval.bytes") or "4096"),
                index_max_bytes=int(r.value(image, TOPIC, topic, "segment.index.bytes") or "10485760"),
                compression=_COMPRESSION_TYPES.get(
                    (r.value(image, TOPIC, topic, "compression.type") or "producer").strip().lower()
                ),
            )
            self._topic_configs[topic] = cached
        return cached

    def _flush_ms_by_topic(self) -> dict[str, int]:
        """The topics with a ``flush.ms`` (their own or the broker's), resolved once per configs and
        topic names (see ``publish``)."""
        cached = self._flush_ms_topics
        if cached is None:
            cached = self._flush_ms_topics = {}
            for name in self._image.topics_by_name:
                flush_ms = self._topic_config(name).flush_ms
                if flush_ms < _NEVER:
                    cached[name] = flush_ms
        return cached

    def _maybe_flush(self, partition: Partition, now_ms: int) -> None:
        """Kafka's flush policy: fsync once ``flush.messages`` appends are unflushed (never, by
        default: durability comes from replication). Runs before the append is acknowledged."""
        config = self._topic_config(partition.topic)
        if config.flush_messages < _NEVER and partition.log.unflushed_messages >= config.flush_messages:
            partition.log.flush(now_ms=now_ms)

    def _fetch_from(self, partition: Partition) -> None:
        for fetcher in self._fetchers.values():
            if partition in fetcher.session:
                # An answer in flight is for the old leader or epoch: dropped. Left in the session,
                # the next fetch asks again (same leader) or forgets it (another one).
                fetcher.session[partition] = _RESTARTED
        self._fetchers.setdefault(partition.leader_id, _Fetcher(partition.leader_id))
        self._refetch(partition)

    def _refetch(self, partition: Partition) -> None:
        """The partition's role changed: every fetcher's next Fetch looks at it again."""
        for fetcher in self._fetchers.values():
            fetcher.dirty[partition] = None

    # -- requests ----------------------------------------------------------------------------------

    def handle(self, envelope: ClientEnvelope, now_ms: int) -> None:
        """A data API request on a broker listener (``DATA_API_KEYS``)."""
        self.now_ms = now_ms
        request = envelope.body
        assert isinstance(request, ApiRequest)
        key = request.api.key
        if key == produce.API.key:
            self._produce(envelope, request.version, request.body, now_ms)
        elif key == fetch.API.key:
            self._fetch(envelope, request.version, request.body, now_ms, first=True)
        elif key == list_offsets.API.key:
            self._outbound.append(envelope.reply(self._list_offsets(request.body, request.version)))
        elif key == offset_for_leader_epoch.API.key:
            self._outbound.append(
                envelope.reply(self._offset_for_leader_epoch(request.body, request.version))
            )
        elif key == describe_log_dirs.API.key:
            self._outbound.append(envelope.reply(self._describe_log_dirs(request.body)))
        else:
            raise ValueError(f"{request.api.name} is not a data API")
        self.complete_waiting(now_ms)

    def _describe_log_dirs(self, body: Any) -> Any:
        """Kafka's ``ReplicaManager.describeLogDirs``: every log of each directory (``Topics`` null) or
        the asked ones. OffsetLag is max(HW - LEO, 0) for a current log (0 but on a truncating
        follower); kraft has no future logs (AlterReplicaLogDirs), so IsFutureKey is false."""
        wanted: dict[str, set[int]] | None = None
        if body.topics is not None:
            wanted = {}
            for t in body.topics:
                wanted.setdefault(t.topic, set()).update(t.partitions)
        cls: Any = describe_log_dirs.RESPONSE.cls
        result_cls = cls.DescribeLogDirsResult
        topic_cls = result_cls.DescribeLogDirsTopic
        part_cls = topic_cls.DescribeLogDirsPartition
        results = []
        for path, total_bytes, usable_bytes, logs in self.logs.log_dir_states():
            by_topic: dict[str, list[Any]] = {}
            for log_ in sorted(logs, key=lambda lg: (lg.topic, lg.partition)):
                if wanted is not None and log_.partition not in wanted.get(log_.topic, ()):
                    continue
                by_topic.setdefault(log_.topic, []).append(
                    part_cls(
                        partition_index=log_.partition,
                        partition_size=log_.size_in_bytes,
                        offset_lag=max(log_.high_watermark - log_.log_end_offset, 0),
                        is_future_key=False,
                    )
                )
            results.append(
                result_cls(
                    error_code=0,
                    log_dir=path,
                    topics=[topic_cls(name=name, partitions=rows) for name, rows in by_topic.items()],
                    total_bytes=total_bytes,
                    usable_bytes=usable_bytes,
                )
            )
        return cls(throttle_time_ms=0, error_code=0, results=results)

    def hosts(self, topic_id: uuid.UUID, partition: int) -> bool:
        return TopicIdPartition(topic_id, partition) in self.partitions

    def leaderless_log_info(self) -> list[ReplicaLogInfo]:
        """What this broker's logs hold of the partitions it hosts that wait leaderless with nobody
        eligible (``awaits_recovery`` in its image), for the next heartbeat: the controller's unclean
        recovery elects the most complete of them. Nothing before ``activate``: until the broker has
        caught up with its own registration, its image may predate its restart."""
        image = self._image
        if not self.active or image.offline_partition_count == 0:
            return []  # the usual case, checked without a scan
        out: list[ReplicaLogInfo] = []
        for tp in image.leaderless_partitions():
            partition = self.partitions.get(tp)
            p = image.partition(tp.topic_id, tp.partition_id)
            if partition is None or p is None or not awaits_recovery(p, image):
                continue
            log_ = partition.log
            end = log_.log_end_offset
            out.append(
                ReplicaLogInfo(
                    topic_id=tp.topic_id,
                    partition=tp.partition_id,
                    partition_epoch=p.partition_epoch,
                    last_epoch=last_written_epoch(log_.epoch_entries, end),
                    log_end_offset=end,
                )
            )
        return out

    # -- produce -----------------------------------------------------------------------------------

    def _produce(self, envelope: ClientEnvelope, version: int, body: Any, now_ms: int) -> None:
        acks = body.acks
        image = self._image
        topics: list[tuple[str, uuid.UUID, list[_PartitionProduce]]] = []
        waits = False
        for t in body.topic_data:
            topic_id = getattr(t, "topic_id", None) if version >= 13 else None
            topic_image = image.topics_by_id.get(topic_id) if topic_id else image.topics_by_name.get(t.name)
            name = topic_image.name if topic_image is not None else t.name
            rows: list[_PartitionProduce] = []
            for pd in t.partition_data:
                row = _PartitionProduce(pd.index)
                rows.append(row)
                if acks not in (0, 1, -1):
                    row.error = ErrorCode.INVALID_REQUIRED_ACKS
                    continue
                if topic_image is None:
                    row.error = (
                        ErrorCode.UNKNOWN_TOPIC_ID if version >= 13 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    )
                    continue
                try:
                    self._append(topic_image.id, name, pd, acks, row, now_ms)
                except ProduceError as e:
                    row.error, row.message = e.error_code, e.message
                if acks == -1 and row.error == ErrorCode.NONE:
                    waits = True
            # An unknown topic id is answered under the id asked about (a v13 client matches by it).
            known = topic_image.id if topic_image is not None else topic_id
            topics.append((name, known if known is not None else uuid.UUID(int=0), rows))
        if acks == 0:
            self._outbound.append(envelope.reply(NO_RESPONSE))
            return
        op = _DelayedProduce(envelope, version, topics, now_ms + max(0, body.timeout_ms))
        if not waits:
            self._answer_produce(op)
            return
        pending = self._settle_produce(op)
        if pending is not None:
            self._produces.watch(pending, op, op.deadline_ms)

    def _append(
        self, topic_id: uuid.UUID, name: str, pd: Any, acks: int, row: _PartitionProduce, now_ms: int
    ) -> None:
        tp = TopicIdPartition(topic_id, pd.index)
        partition = self.partitions.get(tp)
        p = self._image.partition(topic_id, pd.index)
        if p is None:
            raise ProduceError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if partition is None or not partition.is_leader:
            row.leader_hint = (p.leader, p.leader_epoch)
            raise ProduceError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        records = pd.records
        if not records:
            raise ProduceError(ErrorCode.INVALID_RECORD, "Produce requests must carry one record batch")
        size = peek_batch_size(records)
        if size is None or size > len(records):
            # Not one whole batch: Kafka's batch iterator finds none in it (INVALID_RECORD, "at least
            # one record batch per partition"), before any CRC could be checked.
            raise ProduceError(ErrorCode.INVALID_RECORD, "Produce requests must carry one whole record batch")
        if acks == -1 and partition.under_min_isr():
            raise ProduceError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"The size of the current ISR {list(partition.isr)} is insufficient to satisfy the "
                f"min.isr requirement of {partition.min_isr} for partition {name}-{pd.index}",
            )
        config = self._topic_config(name)
        try:
            info = partition.log.append_as_leader(
                bytes(records),
                partition.leader_epoch,
                now_ms=now_ms,
                log_append_time=config.log_append_time,
                max_message_bytes=config.max_message_bytes,
                compression=config.compression,
            )
        except Exception as e:  # the storage layer's typed refusals carry Kafka's code
            code = getattr(e, "error_code", None)
            if code is None:
                raise
            raise ProduceError(ErrorCode(int(code)), str(e)) from e
        finally:
            partition.moved()  # its log end: sessions holding it quiet read it again
        self._maybe_flush(partition, now_ms)
        row.base_offset = info.first_offset
        row.log_append_time_ms = info.log_append_time_ms
        row.log_start_offset = partition.log.log_start_offset
        row.required_offset = info.last_offset + 1
        row.partition = partition
        partition.maybe_advance_high_watermark()  # a leader alone in its ISR commits at once
        self._changed.add(partition.tp)
        self._appended.add(partition.tp)

    def _settle_produce(self, op: _DelayedProduce) -> TopicIdPartition | None:
        """Settle what ``op``'s acks=all partitions can; answers it when every one is settled and
        returns None, else returns the first partition it still waits on."""
        for _, _, rows in op.topics:
            for row in rows:
                if row.error != ErrorCode.NONE or row.required_offset < 0:
                    continue
                partition = row.partition
                assert partition is not None
                current = self.partitions.get(partition.tp)
                if current is not partition or not partition.is_leader:
                    row.error = ErrorCode.NOT_LEADER_OR_FOLLOWER
                    p = self._image.partition(partition.topic_id, partition.index)
                    if p is not None:
                        row.leader_hint = (p.leader, p.leader_epoch)
                elif partition.log.high_watermark >= row.required_offset:
                    row.required_offset = -1  # acknowledged
                elif partition.under_min_isr():
                    row.error = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                else:
                    return partition.tp
        self._answer_produce(op)
        return None

    def _answer_produce(self, op: _DelayedProduce, *, timed_out: bool = False) -> None:
        cls: Any = produce.RESPONSE.cls
        topic_cls = cls.TopicProduceResponse
        part_cls = topic_cls.PartitionProduceResponse
        endpoints: dict[int, Any] = {}
        responses = []
        for name, topic_id, rows in op.topics:
            parts = []
            for row in rows:
                if timed_out and row.error == ErrorCode.NONE and row.required_offset >= 0:
                    row.error = ErrorCode.REQUEST_TIMED_OUT
                kwargs: dict[str, Any] = {
                    "index": row.index,
                    "error_code": int(row.error),
                    "base_offset": row.base_offset,
                    "log_append_time_ms": row.log_append_time_ms,
                    "log_start_offset": row.log_start_offset,
                    "error_message": row.message,
                }
                if row.error == ErrorCode.NOT_LEADER_OR_FOLLOWER and row.leader_hint and op.version >= 10:
                    leader, epoch = row.leader_hint
                    kwargs["current_leader"] = part_cls.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
                    self._endpoint(leader, op.envelope.listener, endpoints, cls.NodeEndpoint)
                parts.append(part_cls(**kwargs))
            t_kwargs: dict[str, Any] = {"name": name, "partition_responses": parts}
            if op.version >= 13:
                t_kwargs["topic_id"] = topic_id
            responses.append(topic_cls(**t_kwargs))
        answer = cls(responses=responses, throttle_time_ms=0)
        if endpoints and op.version >= 10:
            answer.node_endpoints = [endpoints[i] for i in sorted(endpoints)]
        self._outbound.append(op.envelope.reply(answer))

    def _endpoint(self, broker_id: int, listener: str, out: dict[int, Any], node_cls: Any) -> None:
        b = self._image.brokers.get(broker_id)
        e = b.listener(listener) if b is not None else None
        if e is not None and broker_id not in out:
            out[broker_id] = node_cls(node_id=broker_id, host=e.host, port=e.port, rack=b.rack if b else None)

    # -- fetch -------------------------------------------------------------------------------------

    def _fetch(self, envelope: ClientEnvelope, version: int, body: Any, now_ms: int, *, first: bool) -> None:
        context = self._session_context(body, version, now_ms)
        if context.kind is ContextKind.SESSION_ERROR:  # answered at once, as Kafka (nothing to read)
            cls: Any = fetch.RESPONSE.cls
            answer = cls(throttle_time_ms=0, error_code=int(context.error), session_id=0, responses=[])
            self._outbound.append(envelope.reply(answer))
            return
        request = body
        if context.kind is ContextKind.INCREMENTAL:
            body = _session_body(body, version, context, now_ms, self)
        answer, nbytes, errors = self._read(body, version, now_ms, first=first, context=context)
        if first and not errors and nbytes < body.min_bytes and body.max_wait_ms > 0:
            deadline = now_ms + body.max_wait_ms
            self._fetches.watch(
                _FETCH,
                _DelayedFetch(
                    envelope,
                    version,
                    body,
                    request,
                    deadline,
                    self._fetched_partitions(body, version),
                    context,
                    follower=_fetch_replica(body, version)[0] >= 0,
                ),
                deadline,
            )
            return
        self._reply_fetch(envelope, context, answer, version, now_ms)

    def _session_context(self, body: Any, version: int, now_ms: int) -> FetchContext:
        """KIP-227: the fetch session part of a Fetch (before v7 every fetch is sessionless)."""
        ids = version >= 13
        data = [
            ((t.topic_id if ids else t.topic, fp.partition), _partition_fetch(fp, version))
            for t in body.topics
            for fp in t.partitions
        ]
        if version < 7:
            return FetchContext(ContextKind.SESSIONLESS, data)
        replica_id, _ = _fetch_replica(body, version)
        forgotten: list[PartitionKey] = [
            (t.topic_id if ids else t.topic, index)
            for t in body.forgotten_topics_data
            for index in t.partitions
        ]
        return self.fetch_sessions.new_context(
            now_ms,
            session_id=body.session_id,
            epoch=body.session_epoch,
            uses_topic_ids=ids,
            privileged=replica_id >= 0,
            fetch_data=data,
            forgotten=forgotten,
        )

    def _reply_fetch(
        self, envelope: ClientEnvelope, context: FetchContext, answer: Any, version: int, now_ms: int
    ) -> None:
        """Answer a Fetch read as ``answer``: the session decides its ``SessionId`` (a full fetch may
        open one) and, for an incremental fetch, which partitions it carries."""
        ids = version >= 13
        read: dict[PartitionKey, PartitionAnswer] = {}
        for t in answer.responses:
            topic = t.topic_id if ids else t.topic
            for row in t.partitions:
                diverging = row.diverging_epoch
                read[(topic, row.partition_index)] = PartitionAnswer(
                    error_code=row.error_code,
                    high_watermark=row.high_watermark,
                    last_stable_offset=row.last_stable_offset,
                    log_start_offset=row.log_start_offset,
                    records_size=len(row.records) if row.records else 0,
                    preferred_read_replica=row.preferred_read_replica,
                    diverging=diverging is not None and (diverging.epoch >= 0 or diverging.end_offset >= 0),
                )
        decision = self.fetch_sessions.answer(context, now_ms, read)
        answer.error_code = int(decision.error)
        answer.session_id = decision.session_id
        include = decision.include
        if include is not None:
            kept = []
            for t in answer.responses:
                topic = t.topic_id if ids else t.topic
                t.partitions = [row for row in t.partitions if (topic, row.partition_index) in include]
                if t.partitions:
                    kept.append(t)
            answer.responses = kept
        self._outbound.append(envelope.reply(answer))

    def _fetched_partitions(self, body: Any, version: int) -> frozenset[TopicIdPartition]:
        image = self._image
        out: set[TopicIdPartition] = set()
        for t in body.topics:
            topic = image.topics_by_id.get(t.topic_id) if version >= 13 else image.topics_by_name.get(t.topic)
            if topic is not None:
                out.update(TopicIdPartition(topic.id, fp.partition) for fp in t.partitions)
        return frozenset(out)

    def _read(
        self, body: Any, version: int, now_ms: int, *, first: bool, context: FetchContext | None = None
    ) -> tuple[Any, int, bool]:
        """The Fetch answer as of now: (response, bytes of records in it, whether any partition erred).

        For an incremental fetch (``context``) a partition that its session would leave out (no
        records, no error, high watermark and log start as last sent) gets no row: a follower's
        session holds every partition it follows, and building thousands of rows to drop them was
        most of an idle broker's CPU. Its fetch is still accounted (follower state, ISR, HW)."""
        cached = (
            context.session.partitions
            if context is not None and context.kind is ContextKind.INCREMENTAL and context.session is not None
            else None
        )
        replica_id, replica_epoch = _fetch_replica(body, version)
        follower = replica_id >= 0
        reader = None
        if follower and cached is not None:
            assert context is not None and context.session is not None
            reader = _reader(context.session, self, replica_id)
        image = self._image
        cls: Any = fetch.RESPONSE.cls
        topic_cls = cls.FetchableTopicResponse
        part_cls = topic_cls.PartitionData
        budget = body.max_bytes
        total = 0
        errors = False
        responses = []
        for t in body.topics:
            topic_image = (
                image.topics_by_id.get(t.topic_id) if version >= 13 else image.topics_by_name.get(t.topic)
            )
            rows = []
            topic_key = t.topic_id if version >= 13 else t.topic
            hosted = _NONE_HOSTED if topic_image is None else self._by_topic.get(topic_image.id, _NONE_HOSTED)
            for fp in t.partitions:
                # Records are never null, not even beside an error: librdkafka refuses a whole answer
                # with a partition of MessageSetSize -1 (the Jepsen-style check saw consumers loop).
                row = _QuietRow(fp.partition)
                rows.append(row)
                if topic_image is None:
                    row.error_code = (
                        ErrorCode.UNKNOWN_TOPIC_ID if version >= 13 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    )
                    errors = True
                    continue
                partition = hosted.get(fp.partition)
                # KIP-392: a consumer whose Fetch carries client metadata (v11+) may read a follower,
                # up to that follower's high watermark; older consumers and replicas need the leader.
                code = self._check_leader(
                    partition,
                    fp.current_leader_epoch,
                    image,
                    topic_image.id,
                    fp.partition,
                    any_replica=not follower and version >= 11,
                )
                if code != ErrorCode.NONE or partition is None:
                    row.error_code = int(code)
                    p = image.partition(topic_image.id, fp.partition)
                    if p is not None and version >= 12:
                        row.current_leader = part_cls.LeaderIdAndEpoch(
                            leader_id=p.leader, leader_epoch=p.leader_epoch
                        )
                    errors = True
                    continue
                if follower and replica_id not in partition.followers:
                    # Not a replica (as far as this leader knows): naming the current epoch, it may be
                    # one the metadata has not reached us with yet (Kafka's ``followerReplicaOrThrow``
                    # answers UNKNOWN_LEADER_EPOCH then, and the fetcher retries).
                    current = fp.current_leader_epoch == partition.leader_epoch
                    row.error_code = (
                        ErrorCode.UNKNOWN_LEADER_EPOCH if current else ErrorCode.NOT_LEADER_OR_FOLLOWER
                    )
                    errors = True
                    continue
                log_ = partition.log
                if fp.last_fetched_epoch >= 0 and version >= 12:
                    epoch, end = log_.end_offset_for_epoch(fp.last_fetched_epoch)
                    if epoch != fp.last_fetched_epoch or fp.fetch_offset > end:
                        row.diverging_epoch = part_cls.EpochEndOffset(epoch=epoch, end_offset=end)
                        row.high_watermark = log_.high_watermark
                        row.last_stable_offset = log_.high_watermark
                        row.log_start_offset = log_.log_start_offset
                        continue
                # The log's start and end, read once (a fetch reads neither into moving; the high
                # watermark may move below).
                log_start, log_end = log_.log_start_offset, log_.log_end_offset
                if fp.fetch_offset < log_start or fp.fetch_offset > log_end:
                    row.error_code = ErrorCode.OFFSET_OUT_OF_RANGE
                    row.high_watermark = log_.high_watermark
                    row.log_start_offset = log_start
                    errors = True
                    continue
                if follower:
                    state = partition.followers.get(replica_id)
                    assert state is not None
                    state.on_fetch(fp.fetch_offset, log_end, now_ms, replica_epoch)
                    if replica_id not in partition.isr and fp.fetch_offset >= log_.high_watermark:
                        self._isr_candidates[partition] = None  # it may have caught up
                    if partition.maybe_advance_high_watermark():
                        self._changed.add(partition.tp)
                bound = log_end if follower else log_.high_watermark
                data = b""
                if fp.fetch_offset < bound and (budget > 0 or total == 0):
                    limit = min(fp.partition_max_bytes, budget) if total else fp.partition_max_bytes
                    data = log_.read(
                        fp.fetch_offset, max(limit, 1), max_offset=bound, min_one_batch=total == 0
                    )
                    total += len(data)
                    budget -= len(data)
                hw = log_.high_watermark
                if not data and cached is not None:
                    c = cached.get((topic_key, fp.partition))
                    if c is not None and not c.offsets_differ(hw, hw, log_start):
                        rows.pop()  # the session leaves it out: no row to build
                        # Held quiet: a follower in the ISR, at the log end; or one that cannot join
                        # the ISR (a broker in controlled shutdown, out of every ISR and still
                        # fetching until it stops: read on each of its fetches, its partitions were
                        # four in five of the reads of a 100,000-partition controlled shutdown).
                        if (
                            reader is not None
                            and fp.fetch_offset == log_end
                            and (replica_id in partition.isr or not reader.eligible)
                        ):
                            key = (topic_key, fp.partition)
                            state = partition.followers[replica_id]
                            reader.hold_quiet(key, _Quiet(reader, partition, state, log_end, hw, log_start))
                        continue
                row.high_watermark = hw
                row.last_stable_offset = hw
                row.log_start_offset = log_start
                row.records = data
            if not rows and cached is not None:
                continue
            built = [r.build(part_cls) for r in rows]
            t_kwargs: dict[str, Any] = {"partitions": built}
            if version >= 13:
                t_kwargs["topic_id"] = t.topic_id
            else:
                t_kwargs["topic"] = t.topic
            responses.append(topic_cls(**t_kwargs))
        return cls(throttle_time_ms=0, error_code=0, session_id=0, responses=responses), total, errors

    def _check_leader(
        self,
        partition: Partition | None,
        current_epoch: int,
        image: MetadataImage,
        topic_id: uuid.UUID,
        index: int,
        *,
        any_replica: bool = False,
    ) -> ErrorCode:
        if partition is None or not (partition.is_leader or (any_replica and partition.leader_id >= 0)):
            if image.partition(topic_id, index) is None:
                return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if 0 <= current_epoch < partition.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if current_epoch > partition.leader_epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        return ErrorCode.NONE

    # -- list offsets, offset for leader epoch -------------------------------------------------------

    def _list_offsets(self, body: Any, version: int) -> Any:
        image = self._image
        cls: Any = list_offsets.RESPONSE.cls
        part_cls = cls.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
        topics = []
        for t in body.topics:
            topic_image = image.topics_by_name.get(t.name)
            rows = []
            for req in t.partitions:
                code, offset, ts, epoch = ErrorCode.NONE, -1, -1, -1
                partition = (
                    self.partitions.get(TopicIdPartition(topic_image.id, req.partition_index))
                    if topic_image is not None
                    else None
                )
                if topic_image is None or image.partition(topic_image.id, req.partition_index) is None:
                    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif partition is None or (
                    not partition.is_leader and body.replica_id != DEBUGGING_REPLICA_ID
                ):
                    code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                else:
                    code = (
                        self._check_leader(
                            partition if partition.is_leader else None,
                            req.current_leader_epoch,
                            image,
                            topic_image.id,
                            req.partition_index,
                        )
                        if partition.is_leader
                        else ErrorCode.NONE
                    )
                    if code == ErrorCode.NONE:
                        code, offset, ts, epoch = _offset_of(
                            partition, req.timestamp, version, body.replica_id
                        )
                rows.append(
                    part_cls(
                        partition_index=req.partition_index,
                        error_code=int(code),
                        old_style_offsets=[],
                        timestamp=ts,
                        offset=offset,
                        leader_epoch=epoch if version >= 4 else -1,
                    )
                )
            topics.append(cls.ListOffsetsTopicResponse(name=t.name, partitions=rows))
        return cls(throttle_time_ms=0, topics=topics)

    def _offset_for_leader_epoch(self, body: Any, version: int) -> Any:
        image = self._image
        cls: Any = offset_for_leader_epoch.RESPONSE.cls
        topic_cls = cls.OffsetForLeaderTopicResult
        part_cls = topic_cls.EpochEndOffset
        topics = []
        for t in body.topics:
            topic_image = image.topics_by_name.get(t.topic)
            rows = []
            for req in t.partitions:
                row = part_cls(error_code=0, partition=req.partition, leader_epoch=-1, end_offset=-1)
                rows.append(row)
                if topic_image is None:
                    row.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                partition = self.partitions.get(TopicIdPartition(topic_image.id, req.partition))
                debugging = version >= 3 and body.replica_id == DEBUGGING_REPLICA_ID
                if debugging and partition is not None:
                    code = ErrorCode.NONE
                else:
                    code = self._check_leader(
                        partition, req.current_leader_epoch, image, topic_image.id, req.partition
                    )
                if code != ErrorCode.NONE or partition is None:
                    row.error_code = int(code)
                    continue
                epoch, end = partition.log.end_offset_for_epoch(req.leader_epoch)
                row.leader_epoch, row.end_offset = epoch, end
            topics.append(topic_cls(topic=t.topic, partitions=rows))
        return cls(throttle_time_ms=0, topics=topics)

    # -- the replica fetcher -----------------------------------------------------------------------

    def _fetch_requests(self, now_ms: int) -> int | None:
        """Send a Fetch to every leader that has none in flight; returns the next fetcher deadline."""
        wake: int | None = None
        followed = self._followed_leaders()
        for leader_id in list(self._fetchers):
            if leader_id not in followed and self._fetchers[leader_id].in_flight is None:
                del self._fetchers[leader_id]
        if self.broker_epoch < 0:
            return None
        for leader_id in followed:
            fetcher = self._fetchers.setdefault(leader_id, _Fetcher(leader_id))
            if fetcher.in_flight is not None:
                if now_ms >= fetcher.deadline_ms:  # no answer in time: give up on it and back off
                    self._fetcher_of.pop(fetcher.in_flight, None)
                    fetcher.in_flight = None
                    fetcher.session_failed()
                    fetcher.not_before_ms = now_ms + self.config.fetch_backoff_ms
                else:
                    wake = _earliest(wake, fetcher.deadline_ms)
                    continue
            if now_ms < fetcher.not_before_ms:
                wake = _earliest(wake, fetcher.not_before_ms)
                continue
            self._send_fetch(fetcher, now_ms)
            wake = _earliest(wake, fetcher.deadline_ms)
        return wake

    def _send_fetch(self, fetcher: _Fetcher, now_ms: int) -> None:
        """One Fetch to a leader: a full one (every partition) when the fetch session is new or
        failed, else an incremental one listing only the partitions whose request changed (added
        or moved on) and forgetting those no longer followed (Kafka's ``FetchSessionHandler``)."""
        cls: Any = fetch.REQUEST.cls
        topic_cls = cls.FetchTopic
        session = fetcher.session
        forgotten: dict[uuid.UUID, list[int]] = {}
        max_bytes = self.config.fetch_max_bytes
        full = fetcher.session_epoch == INITIAL_EPOCH
        checked = (self._retention_passes, max_bytes)
        if full:
            session.clear()
            candidates = self._followed_by_leader().get(fetcher.leader_id, [])
        elif fetcher.checked != checked:
            candidates = self._followed_by_leader().get(fetcher.leader_id, [])
            self._forget_stale(fetcher, set(candidates), forgotten)
        else:
            # Only what changed, in the same (topic, partition) order as ``partitions``.
            candidates = sorted(fetcher.dirty, key=_follow_order)
            if candidates:
                leader_id, hosted = fetcher.leader_id, self.partitions
                members = {
                    p
                    for p in candidates
                    if hosted.get(p.tp) is p and not p.is_leader and p.leader_id == leader_id
                }
                gone = {p for p in candidates if p not in members and p in session}
                if gone:
                    self._forget_stale(fetcher, members, forgotten, only=gone)
                candidates = [p for p in candidates if p in members]
        fetcher.checked = checked
        fetcher.dirty.clear()
        send: list[tuple[TopicIdPartition, PartitionFetch]] = []
        for partition in candidates:  # in (topic, partition) order
            log_ = partition.log
            end = log_.log_end_offset
            latest = log_.latest_epoch
            last_epoch = -1 if latest is None else latest
            start = log_.log_start_offset
            old = session.get(partition)
            if (
                old is not None
                and old.fetch_offset == end
                and old.current_leader_epoch == partition.leader_epoch
                and old.last_fetched_epoch == last_epoch
                and old.log_start_offset == start
                and old.max_bytes == max_bytes
            ):
                continue  # the leader's session has it as it is
            r = PartitionFetch(end, max_bytes, partition.leader_epoch, last_epoch, start)
            session[partition] = r
            send.append((partition.tp, r))
        by_topic: dict[uuid.UUID, list[Any]] = {}
        for tp, r in send:
            by_topic.setdefault(tp.topic_id, []).append(
                topic_cls.FetchPartition(
                    partition=tp.partition_id,
                    current_leader_epoch=r.current_leader_epoch,
                    fetch_offset=r.fetch_offset,
                    last_fetched_epoch=r.last_fetched_epoch,
                    log_start_offset=r.log_start_offset,
                    partition_max_bytes=r.max_bytes,
                )
            )
        body = cls(
            replica_state=cls.ReplicaState(replica_id=self.node_id, replica_epoch=self.broker_epoch),
            max_wait_ms=self.config.fetch_wait_max_ms,
            min_bytes=self.config.fetch_min_bytes,
            max_bytes=self.config.fetch_response_max_bytes,
            isolation_level=0,
            session_id=fetcher.session_id,
            session_epoch=fetcher.session_epoch,
            topics=[topic_cls(topic_id=t, partitions=ps) for t, ps in by_topic.items()],
            forgotten_topics_data=[
                cls.ForgottenTopic(topic_id=t, partitions=ps) for t, ps in forgotten.items()
            ],
            rack_id="",
        )
        correlation_id = self._next_correlation_id()
        fetcher.in_flight = correlation_id
        fetcher.deadline_ms = now_ms + self.config.fetch_wait_max_ms + self.config.request_timeout_ms
        self._fetcher_of[correlation_id] = fetcher.leader_id
        request = ApiRequest(fetch.CLIENT_API, FETCH_VERSION, body)
        self._outbound.append(
            ClientEnvelope(
                self.node_id, fetcher.leader_id, correlation_id, self.config.inter_broker_listener, request
            )
        )

    def _forget_stale(
        self,
        fetcher: _Fetcher,
        members: set[Partition],
        forgotten: dict[uuid.UUID, list[int]],
        *,
        only: set[Partition] | None = None,
    ) -> None:
        """Drop from the session what this fetcher no longer follows (of ``only``, when given), in
        the session's order; ``forgotten`` gets those the leader's session must drop."""
        session = fetcher.session
        stale = [p for p in session if p not in members and (only is None or p in only)]
        for p in stale:
            del session[p]
            now = self.partitions.get(p.tp)  # a Partition object replaced: same tp, still followed
            if now is None or now.is_leader or now.leader_id != fetcher.leader_id:
                forgotten.setdefault(p.tp.topic_id, []).append(p.tp.partition_id)

    def handle_answer(self, envelope: ClientEnvelope, now_ms: int) -> bool:
        """A leader's answer to one of our fetches (returns whether it was ours)."""
        self.now_ms = now_ms
        leader_id = self._fetcher_of.pop(envelope.correlation_id, None)
        if leader_id is None:
            return False
        fetcher = self._fetchers.get(leader_id)
        if fetcher is None or fetcher.in_flight != envelope.correlation_id:
            return True
        fetcher.in_flight = None
        answer = envelope.body
        assert isinstance(answer, ApiResponse)
        response: Any = answer.body
        if response is None or response.error_code != ErrorCode.NONE:
            fetcher.session_failed(None if response is None else response.error_code)
            fetcher.not_before_ms = now_ms + self.config.fetch_backoff_ms
            return True
        fetcher.session_answered(response.session_id)
        backoff = False
        for t in response.responses:
            for row in t.partitions:
                tp = TopicIdPartition(t.topic_id, row.partition_index)
                partition = self.partitions.get(tp)
                asked = fetcher.session.get(partition) if partition is not None else None
                if (
                    partition is None
                    or partition.is_leader
                    or partition.leader_id != leader_id
                    or asked is None
                    or asked is _RESTARTED
                ):
                    continue  # the role changed while the fetch was in flight
                fetcher.dirty[partition] = None  # its log moves: the next Fetch looks at it
                if asked.fetch_offset != partition.log.log_end_offset:
                    continue  # the log moved (truncated) meanwhile: the next fetch asks again
                backoff |= self._take_fetched(partition, row)
                self._changed.add(tp)  # consumers reading this follower (KIP-392) may be waiting
        if backoff:
            fetcher.not_before_ms = now_ms + self.config.fetch_backoff_ms
        return True

    def _take_fetched(self, partition: Partition, row: Any) -> bool:
        """Apply one partition of a leader's answer; returns whether the fetcher should back off."""
        log_ = partition.log
        code = row.error_code
        if code != ErrorCode.NONE:
            if code == ErrorCode.OFFSET_OUT_OF_RANGE and 0 <= log_.log_end_offset < row.log_start_offset:
                log_.truncate_fully_and_start_at(row.log_start_offset)
                return False
            return True  # NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH: wait for the metadata
        diverging = row.diverging_epoch
        if diverging is not None and (diverging.epoch >= 0 or diverging.end_offset >= 0):
            # Kafka's AbstractFetcherThread.getOffsetTruncationState: truncate to where both logs
            # agree as far as this answer tells; the next fetch (with the new last epoch) checks again.
            if diverging.epoch < 0:
                target = min(diverging.end_offset, log_.log_end_offset)
            else:
                epoch, end = log_.end_offset_for_epoch(diverging.epoch)
                target = log_.high_watermark if epoch < 0 else min(diverging.end_offset, end)
            target = max(target, log_.log_start_offset)
            end = log_.log_end_offset
            if target <= end:
                if target < end:
                    log.info(
                        "broker %d: %s-%d diverges from leader %d (epoch %d ends at %d): truncating %d -> %d",
                        self.node_id,
                        partition.topic,
                        partition.index,
                        partition.leader_id,
                        diverging.epoch,
                        diverging.end_offset,
                        end,
                        target,
                    )
                # Even at the log end: the epoch cache loses its entries from ``target`` on. Without
                # that, an epoch this broker led without appending stays last in its cache, the next
                # fetch names it again and the follower loops on DivergingEpoch forever (the
                # Jepsen-style check found it; Kafka's ``UnifiedLog.truncateTo`` trims the same way).
                log_.truncate_to(target)
            return False
        records = row.records
        if records:
            log_.append_as_follower(bytes(records))
            self._maybe_flush(partition, self.now_ms)
        log_.set_high_watermark_after_truncation(min(row.high_watermark, log_.log_end_offset))
        return False

    # -- ISR ---------------------------------------------------------------------------------------

    def isr_proposals(self, now_ms: int) -> list[tuple[Partition, tuple[int, ...]]]:
        """The ISR changes the partitions this broker leads want (for the ISR manager): every led
        partition after the metadata moved and every half lag time, for followers that fell behind
        (Kafka's ``isr-expiration`` task); in between, the partitions a follower may have caught up
        with."""
        candidates: Iterable[Partition]
        lag = self.config.replica_lag_time_max_ms
        eligible = self._eligible_brokers(self._image)
        hosted = self.partitions
        whole = now_ms >= self._isr_check_ms
        if self._isr_dirty and not whole:
            valid, bound = self._isr_lag_bound
            whole = (
                self._isr_full
                or not valid
                or eligible != self._isr_eligible
                or (bound is not None and now_ms >= bound)
            )
        if whole:
            candidates = hosted.values()
            self._isr_expandable = {}
            self._isr_eligible = eligible
        elif self._isr_dirty:
            # What the whole scan would answer (see __init__), in its order.
            looked = {**self._isr_recheck, **self._isr_expandable}
            candidates = sorted((p for p in looked if hosted.get(p.tp) is p), key=_seq)
        elif self._isr_candidates:
            candidates = [p for p in self._isr_candidates if hosted.get(p.tp) is p]
            if eligible != self._isr_eligible:
                # ``_isr_expandable`` went by other brokers: the next scan after a delta is whole.
                self._isr_full = True
        else:
            return []
        if self._isr_dirty or whole:
            self._isr_dirty = self._isr_full = False
            self._isr_check_ms = now_ms + max(1, lag // 2)
            self._isr_recheck = {}
        self._isr_candidates = {}
        # A scan by other eligible brokers than the whole scan's leaves _isr_expandable as it is.
        expandable = self._isr_expandable if eligible == self._isr_eligible else {}
        out = []
        for partition in candidates:
            if not partition.is_leader:
                expandable.pop(partition, None)
                continue
            if partition.may_add(eligible):
                expandable[partition] = None
            else:
                expandable.pop(partition, None)
            if partition.pending_isr is not None:
                continue
            proposal = partition.proposed_isr(now_ms, lag, eligible)
            if proposal is not None:
                out.append((partition, proposal))
        return out

    # -- timers ------------------------------------------------------------------------------------

    def poll(self, now_ms: int, broker_epoch: int) -> int | None:
        """Run what is due; returns when to poll again (None: nothing scheduled)."""
        self.now_ms = now_ms
        self.broker_epoch = broker_epoch
        self._new_budget = NEW_PARTITIONS_PER_POLL
        more_roles = self._take_pending(now_ms) if self._pending else False
        for op in self._fetches.expire(now_ms):
            answer, _, _ = self._read(self._body_now(op), op.version, now_ms, first=False, context=op.context)
            self._reply_fetch(op.envelope, op.context, answer, op.version, now_ms)
        for produce_op in self._produces.expire(now_ms):
            if self._settle_produce(produce_op) is not None:
                self._answer_produce(produce_op, timed_out=True)
        wake = self._fetch_requests(now_ms)
        self.complete_waiting(now_ms)
        if now_ms >= self._next_checkpoint_ms:
            self._next_checkpoint_ms = now_ms + self.config.hw_checkpoint_interval_ms
            if self.partitions:
                # flush.ms, checked at the checkpoint interval (Kafka's log flusher runs on its own
                # log.flush.scheduler.interval.ms, which defaults to never). Only the logs of topics
                # that set it are looked at: none by default (a pass over 100,000 logs every 5 s
                # was 2 % of a broker's controlled shutdown).
                flush_ms_by_topic = self._flush_ms_by_topic()
                for partition in self.partitions.values() if flush_ms_by_topic else ():
                    flush_ms = flush_ms_by_topic.get(partition.topic)
                    log_ = partition.log
                    if flush_ms is None or not log_.unflushed_messages:
                        continue
                    if now_ms - log_.last_flush_ms >= flush_ms:
                        log_.flush(now_ms=now_ms)
                self.logs.checkpoint()
        if now_ms >= self._next_retention_ms:
            self._next_retention_ms = now_ms + self.config.retention_check_interval_ms
            self._retention_passes += 1  # log starts may move: fetchers check every partition again
            for partition in self.partitions.values():
                # Whole segments past retention.ms or beyond retention.bytes, never the active one
                # or past the high watermark (the log moves its start offset).
                config = self._topic_config(partition.topic)
                log_ = partition.log
                start = log_.log_start_offset
                log_.delete_old_segments(now_ms, config.retention_ms, config.retention_bytes)
                if log_.log_start_offset != start:
                    partition.moved()
        wake = _earliest(wake, self._next_checkpoint_ms)
        wake = _earliest(wake, self._next_retention_ms)
        wake = _earliest(wake, self._fetches.next_deadline_ms())
        wake = _earliest(wake, self._produces.next_deadline_ms())
        wake = _earliest(wake, self._next_lag_wake(now_ms))
        return now_ms if more_roles else wake

    def _next_lag_wake(self, now_ms: int) -> int | None:
        """When the first ISR follower of a led partition will have lagged too long: scanned again
        only after a role change or once the bound computed last is reached."""
        version, bound = self._lag_wake
        if version == self._roles_version and (bound is None or now_ms < bound):
            return bound
        bound = earliest_lag_deadline_ms(self._led, self.config.replica_lag_time_max_ms)
        self._lag_wake = (self._roles_version, bound)
        self._isr_lag_bound = (True, bound)
        return bound

    def _followed_by_leader(self) -> dict[int, list[Partition]]:
        """The partitions this broker follows, by leader, in (topic, partition) order (a full
        fetch's list); one pass over ``_ordered`` after a partition is hosted or dropped or changes
        leader."""
        version, followed = self._roles_cache
        if version == self._layout_version:
            return followed
        ordered = self._ordered
        if self._ordered_removed:
            hosted = self.partitions
            ordered = self._ordered = [p for p in ordered if hosted.get(p.tp) is p]
            self._ordered_removed = False
        if self._ordered_added:
            ordered.sort(key=_follow_order)  # stable: as sorting the hosted ones afresh
            self._ordered_added = False
        followed = {}
        node_id = self.node_id
        for partition in ordered:
            if not partition.is_leader and partition.leader_id >= 0 and partition.leader_id != node_id:
                followed.setdefault(partition.leader_id, []).append(partition)
        self._roles_cache = (self._layout_version, followed)
        return followed

    def complete_waiting(self, now_ms: int) -> None:
        """Re-check what waits on the partitions whose data, high watermark or ISR moved (all of them
        after a role or config change): a produce waits under one partition, a fetch is re-read only
        when one of its partitions moved."""
        produces, fetches = self._produces, self._fetches
        while self._changed or self._all_changed:
            changed, appended, everything = self._changed, self._appended, self._all_changed
            self._changed, self._appended, self._all_changed = set(), set(), False
            for tp in produces.keys() if everything else changed:
                for op in produces.waiting(tp):
                    pending = self._settle_produce(op)
                    if pending is None:
                        produces.remove(op)
                    elif pending != tp:
                        produces.move(op, pending)
                    else:
                        # Still short of tp's high watermark; so is every later op here: they wait
                        # oldest first, and a produce appends to each of its partitions when it
                        # arrives, so a later one needs a higher offset of tp. (Checking them all
                        # made each high watermark move cost the whole queue: at 1,000 records/s,
                        # 36 checks per produce and a backlog that fed itself.)
                        break
            if not len(fetches):
                continue
            for f in fetches.waiting(_FETCH):
                # A follower reads up to the log end: a moved high watermark alone (each follower
                # fetch moves it) gives it nothing to read, as in Kafka's DelayedFetch.
                if not everything and not (
                    self._reads_any(f, appended) if f.follower else f.partitions & changed
                ):
                    continue
                answer, nbytes, errors = self._read(
                    self._body_now(f), f.version, now_ms, first=False, context=f.context
                )
                if errors or nbytes >= f.body.min_bytes:
                    fetches.remove(f)
                    self._reply_fetch(f.envelope, f.context, answer, f.version, now_ms)

    def _reads_any(self, f: _DelayedFetch, tps: set[TopicIdPartition]) -> bool:
        """Whether a parked fetch reads one of ``tps``: an incremental one reads its whole session
        (its body as parked left its quiet partitions out)."""
        if f.partitions & tps:
            return True
        session = f.context.session
        if not tps or f.context.kind is not ContextKind.INCREMENTAL or session is None:
            return False
        keys = session.partitions
        if f.version >= 13:
            return any((tp.topic_id, tp.partition_id) in keys for tp in tps)
        return any(
            (p.topic, tp.partition_id) in keys for tp in tps if (p := self.partitions.get(tp)) is not None
        )

    def _body_now(self, f: _DelayedFetch) -> Any:
        """What a parked fetch reads now: an incremental one's session as it is now."""
        if f.context.kind is ContextKind.INCREMENTAL:
            return _session_body(f.request, f.version, f.context, self.now_ms, self)
        return f.body

    def drain(self) -> list[ClientEnvelope]:
        out, self._outbound = self._outbound, []
        return out

    def close(self) -> None:
        """Answer nothing more; checkpoint the high watermarks."""
        if self.partitions:
            self.logs.checkpoint()


@dataclass(slots=True)
class _Following:
    """The partitions this broker follows of one leader (see ``ReplicaManager._led``)."""

    count: int = 0
    heap: list[tuple[str, int, int, Partition]] = field(default_factory=list)


_NONE_HOSTED: Mapping[int, Partition] = {}


def _seq(partition: Partition) -> int:
    return partition.seq


def _partition_fetch(fp: Any, version: int) -> PartitionFetch:
    return PartitionFetch(
        fetch_offset=fp.fetch_offset,
        max_bytes=fp.partition_max_bytes,
        current_leader_epoch=fp.current_leader_epoch if version >= 9 else -1,
        last_fetched_epoch=fp.last_fetched_epoch if version >= 12 else -1,
        log_start_offset=fp.log_start_offset,
    )


# A follower's session entry for a partition whose fetching restarted (new leader or epoch).
_RESTARTED = PartitionFetch(fetch_offset=-2, max_bytes=-1)


def _follow_order(partition: Partition) -> tuple[str, int]:
    """The order a fetcher lists its partitions in (``_followed_by_leader``'s)."""
    return partition.topic, partition.index


class _Quiet:
    """A follower's partition that its fetch session's last read found quiet: caught up (the
    follower asked for the log end), in the ISR, nothing to send (high watermark and log start as
    last sent). While the partition's role, log end, high watermark and log start stay as they were,
    the answer stays the same (no row) and so does the follower's progress except its clock: reads
    of the session skip it, and the session's clock stands for its fetches (``FollowerState.quiet``).
    The values are what ``ReplicaConfig.check_quiet`` checks against."""

    __slots__ = (
        "high_watermark",
        "log_end_offset",
        "log_start_offset",
        "partition",
        "reader",
        "role_version",
        "state",
    )

    def __init__(
        self,
        reader: _SessionReader,
        partition: Partition,
        state: FollowerState,
        log_end_offset: int,
        high_watermark: int,
        log_start: int,
    ) -> None:
        self.reader = reader
        self.partition = partition
        self.state = state
        self.role_version = partition.role_version
        self.log_end_offset = log_end_offset
        self.high_watermark = high_watermark
        self.log_start_offset = log_start

    @property
    def clock(self) -> QuietClock:
        return self.reader.clock

    def release(self) -> None:
        self.reader.touched.append(self.partition)

    def unchanged(self) -> bool:
        partition = self.partition
        log_ = partition.log
        reader = self.reader
        return (
            partition.role_version == self.role_version
            and (reader.replica_id in partition.isr or not reader.eligible)
            and log_.log_end_offset == self.log_end_offset
            and log_.high_watermark == self.high_watermark
            and log_.log_start_offset == self.log_start_offset
        )


class _SessionReader:
    """How the leader reads one follower's fetch session (KIP-227): the partitions it must read
    (``active``) and those it may skip (``quiet``: nothing to send until the partition moves, which
    ``Partition.moved`` reports in ``touched``).

    An idle follower's session holds every partition it follows, and reading each on every fetch
    was an idle broker's CPU (37-41 % of a core with 10,000 partitions); checking each quiet one
    on every read still cost O(partitions) per fetch (a read at arrival and one at expiry of each
    long poll: 8 a second per broker; three brokers with 3,000 partitions, 10 idle simulated
    seconds in process: 1.51 -> 0.06 CPU-s). Now a read costs what changed: the partitions the request
    changed, those that moved, and those not quiet. Kafka reads them all, in Java."""

    __slots__ = (
        "_cache",
        "active",
        "clock",
        "eligible",
        "quiet",
        "replica_id",
        "seen_epoch",
        "session",
        "touched",
    )

    def __init__(
        self, session: FetchSession, cache: FetchSessionCache, replica_id: int, eligible: bool
    ) -> None:
        self.session = session
        self._cache = cache
        self.replica_id = replica_id
        self.eligible = eligible  # kept by ReplicaManager._update_eligible
        self.active: dict[PartitionKey, None] = dict.fromkeys(session.partitions)
        self.quiet: dict[PartitionKey, _Quiet] = {}
        self.touched: list[Partition] = []
        self.clock = QuietClock()
        self.seen_epoch = -1  # the session epoch whose request was taken in

    def live(self) -> bool:
        return self._cache.sessions.get(self.session.id) is self.session

    def wake(self, key: PartitionKey) -> None:
        """Read ``key`` again from now on (it moved, its request changed or it is new here)."""
        q = self.quiet.pop(key, None)
        if q is not None:
            q.state.let_go(q)  # the session's reads until now were its fetches
        self.active[key] = None

    def drop(self, key: PartitionKey) -> None:
        self.active.pop(key, None)
        q = self.quiet.pop(key, None)
        if q is not None:
            q.state.let_go(q)

    def wake_outside_isr(self) -> None:
        """Read again every partition held quiet whose ISR does not hold this follower."""
        for key in [k for k, q in self.quiet.items() if self.replica_id not in q.partition.isr]:
            self.wake(key)

    def hold_quiet(self, key: PartitionKey, q: _Quiet) -> None:
        self.active.pop(key, None)
        self.quiet[key] = q
        q.state.hold(q)
        q.partition.watch(self)


def _reader(session: FetchSession, manager: ReplicaManager, replica_id: int) -> _SessionReader:
    reader = session.reader
    if reader is None:
        eligible = replica_id in manager._eligible_brokers(manager._image)
        reader = session.reader = _SessionReader(session, manager.fetch_sessions, replica_id, eligible)
    assert isinstance(reader, _SessionReader)
    return reader


def _fetch_replica(body: Any, version: int) -> tuple[int, int]:
    """A Fetch's replica id (-1: a consumer) and broker epoch (-1 before v15's ``ReplicaState``)."""
    if version >= 15:
        return body.replica_state.replica_id, body.replica_state.replica_epoch
    return body.replica_id, -1


def _session_body(
    body: Any, version: int, context: FetchContext, now_ms: int, manager: ReplicaManager
) -> Any:
    """An incremental Fetch as the broker reads it: the session's partitions, with the request it
    last sent for each, in the session's order (consecutive partitions of a topic grouped), except
    those a follower's session holds quiet (``_SessionReader``), whose fetch is this read's.

    Plain objects with the attributes ``_read`` and the purgatory use, not the generated request
    classes: a follower's session holds every partition it follows, rebuilt on each of its fetches.
    """
    session = context.session
    assert session is not None
    partitions = session.partitions
    replica_id, replica_epoch = _fetch_replica(body, version)
    if replica_id < 0:
        keys: Iterable[PartitionKey] = partitions
    else:
        reader = _reader(session, manager, replica_id)
        ids = session.uses_topic_ids  # (as the request: the session checked it)
        if reader.seen_epoch != context.expected_epoch:
            # This request's changes (taken in once: a parked fetch's later reads have the same).
            reader.seen_epoch = context.expected_epoch
            for t in body.forgotten_topics_data:
                topic = t.topic_id if ids else t.topic
                for index in t.partitions:
                    reader.drop((topic, index))
            for t in body.topics:
                topic = t.topic_id if ids else t.topic
                for fp in t.partitions:
                    key = (topic, fp.partition)
                    if key in partitions:  # (not if the same request also forgot it)
                        reader.wake(key)
        if reader.touched:
            touched, reader.touched = reader.touched, []
            quiet = reader.quiet
            for partition in touched:
                key = (partition.topic_id if ids else partition.topic, partition.index)
                q = quiet.get(key)
                if q is not None and q.partition is partition:
                    reader.wake(key)
        if manager.config.check_quiet:
            for key, q in reader.quiet.items():
                if not q.unchanged():
                    raise AssertionError(f"quiet partition {key} moved without Partition.moved()")
        # Every partition still quiet is fetched now, at the log end, as at the last read.
        reader.clock.ms = now_ms
        reader.clock.epoch = replica_epoch
        keys = sorted(reader.active, key=lambda k: partitions[k].pos)
    topics: list[_ReadTopic] = []
    last: Any = None
    for key in keys:
        topic, index = key
        request = partitions[key].request
        if last is None or last != topic:
            last = topic
            topics.append(_ReadTopic(topic, []))
        topics[-1].partitions.append(
            _ReadPartition(
                index,
                request.current_leader_epoch,
                request.fetch_offset,
                request.last_fetched_epoch,
                request.log_start_offset,
                request.max_bytes,
            )
        )
    return _ReadBody(body, topics)


class _ReadPartition:
    __slots__ = (
        "current_leader_epoch",
        "fetch_offset",
        "last_fetched_epoch",
        "log_start_offset",
        "partition",
        "partition_max_bytes",
    )

    def __init__(
        self,
        partition: int,
        current_leader_epoch: int,
        fetch_offset: int,
        last_fetched_epoch: int,
        log_start_offset: int,
        partition_max_bytes: int,
    ) -> None:
        self.partition = partition
        self.current_leader_epoch = current_leader_epoch
        self.fetch_offset = fetch_offset
        self.last_fetched_epoch = last_fetched_epoch
        self.log_start_offset = log_start_offset
        self.partition_max_bytes = partition_max_bytes


class _ReadTopic:
    """A topic of a session read: ``topic_id`` and ``topic`` are both its key (v13+: an id)."""

    __slots__ = ("partitions", "topic", "topic_id")

    def __init__(self, key: Any, partitions: list[_ReadPartition]) -> None:
        self.topic_id = self.topic = key
        self.partitions = partitions


class _ReadBody:
    """The request's top-level fields, with the session's partitions as ``topics``."""

    __slots__ = ("_request", "topics")

    def __init__(self, request: Any, topics: list[_ReadTopic]) -> None:
        self._request = request
        self.topics = topics

    def __getattr__(self, name: str) -> Any:
        return getattr(self._request, name)


def _offset_of(
    partition: Partition, ts: int, version: int, replica_id: int
) -> tuple[ErrorCode, int, int, int]:
    log_ = partition.log
    epoch = partition.leader_epoch
    if ts in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        if ts == EARLIEST_LOCAL_TIMESTAMP and version < 8:
            return ErrorCode.UNSUPPORTED_VERSION, -1, -1, -1
        return ErrorCode.NONE, log_.log_start_offset, -1, _epoch_at(log_, log_.log_start_offset)
    if ts == LATEST_TIMESTAMP:
        end = log_.log_end_offset if replica_id == DEBUGGING_REPLICA_ID else log_.high_watermark
        return ErrorCode.NONE, end, -1, epoch
    if ts == LATEST_TIERED_TIMESTAMP:
        if version < 9:
            return ErrorCode.UNSUPPORTED_VERSION, -1, -1, -1
        return ErrorCode.NONE, -1, -1, -1  # nothing tiered
    if ts == MAX_TIMESTAMP and version < 7:
        return ErrorCode.UNSUPPORTED_VERSION, -1, -1, -1
    found = log_.offset_for_timestamp(ts, max_offset=log_.high_watermark)
    if found is None:
        return ErrorCode.NONE, -1, -1, -1
    offset, timestamp, leader_epoch = found
    return ErrorCode.NONE, offset, timestamp, leader_epoch


def _epoch_at(log_: PartitionLogLike, offset: int) -> int:
    """The leader epoch of the record at ``offset`` (the latest epoch that starts at or before it)."""
    found = -1
    for entry in log_.epoch_entries:
        if entry.start_offset > offset:
            break
        found = entry.epoch
    return found


def _earliest(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)
