"""Incremental fetch sessions (KIP-227), sans-IO: Kafka's ``FetchSession``/``FetchSessionCache``.

A fetcher (consumer or follower) that sends a full Fetch with ``SessionEpoch`` 0 may get a session:
the broker remembers the partitions it asked for (each one's fetch offset, max bytes, leader epochs
and log start offset, and the high watermark and log start offset last sent back) and answers the
new ``SessionId``. Later *incremental* fetches (that ``SessionId``, the next epoch) list only the
partitions whose request changed and ``ForgottenTopicsData`` for those to drop; the broker reads
every partition of the session and answers only those whose answer changed (Kafka's rule: records,
a moved high watermark or log start offset, a preferred read replica, an error, a diverging epoch).

The request side is decided by ``FetchSessionCache.new_context`` before anything is read; the answer
side by ``FetchSessionCache.answer`` once the broker has read (which may be after a long poll):

* ``SessionId`` 0, ``SessionEpoch`` -1: sessionless (``SessionId`` 0 answered, nothing kept).
* ``SessionEpoch`` 0 (full): any session named is closed first; a session is created when the
  answer goes out if a slot is free or one can be evicted, else ``SessionId`` 0.
* ``SessionId`` ≠ 0, ``SessionEpoch`` -1: the session is closed; answered as sessionless.
* ``SessionId`` ≠ 0, ``SessionEpoch`` > 0 (incremental): FETCH_SESSION_ID_NOT_FOUND (70) for an
  unknown id, INVALID_FETCH_SESSION_EPOCH (71) for another epoch than the session expects,
  FETCH_SESSION_TOPIC_ID_ERROR (106) when the request names topics by id (v13+) and the session by
  name or the other way round. A session left empty by ``ForgottenTopicsData`` is closed and the
  fetch answered as sessionless.

Eviction (``maybe_create``, when every slot is taken) follows Kafka's ``tryEvict``: first the least
recently used session if it was unused for more than ``eviction_ms``; else, among the sessions that
are evictable for the newcomer, the one with the smallest key (privileged?, partitions, id) if it is
smaller than the newcomer's own. A follower's (privileged) session may evict any consumer session
and followers' sessions older than ``eviction_ms``; a consumer's only consumers' sessions older than
``eviction_ms`` with fewer partitions. As in Kafka, which sessions are evictable is decided when a
session is last touched (created or used).

Nothing here reads a clock or draws randomness: ``now_ms`` comes with each call and session ids from
the injected ``new_session_id`` (retried until positive and not in use, as Kafka's ``newSessionId``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from kraft.protocol.error_codes import ErrorCode

INVALID_SESSION_ID: Final = 0
INITIAL_EPOCH: Final = 0
FINAL_EPOCH: Final = -1
DEFAULT_CACHE_SLOTS: Final = 1000  # max.incremental.fetch.session.cache.slots
DEFAULT_EVICTION_MS: Final = 120_000  # min.incremental.fetch.session.eviction.ms

TopicKey = uuid.UUID | str  # a topic id in a v13+ session, a topic name before
PartitionKey = tuple[TopicKey, int]


def next_epoch(epoch: int) -> int:
    """Kafka's ``FetchMetadata.nextEpoch``: 0 -> 1, then +1, wrapping to 1 after Int.MAX_VALUE."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == 2147483647 else epoch + 1


@dataclass(frozen=True, slots=True)
class PartitionFetch:
    """One partition as a Fetch request asks for it."""

    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1


@dataclass(frozen=True, slots=True)
class PartitionAnswer:
    """What the session rule looks at in one partition's answer."""

    error_code: int = 0
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records_size: int = 0
    preferred_read_replica: int = -1
    diverging: bool = False


@dataclass(slots=True)
class CachedPartition:
    """A session's partition: the request last seen and what was last sent (Kafka's CachedPartition)."""

    request: PartitionFetch
    high_watermark: int = -1  # -1 (as after an error) makes the next answer carry the partition
    last_stable_offset: int = -1
    log_start_offset: int = -1
    pos: int = 0  # its place in the session's order (``FetchSession.partitions``): ascending

    def must_respond(self, answer: PartitionAnswer, *, update: bool) -> bool:
        """Kafka's ``maybeUpdateResponseData`` (plus the last stable offset, which here is the high
        watermark anyway): whether the partition goes into an incremental answer."""
        error = answer.error_code != ErrorCode.NONE
        respond = (
            answer.records_size > 0
            or answer.preferred_read_replica >= 0
            or answer.diverging
            or error
            or self.offsets_differ(answer.high_watermark, answer.last_stable_offset, answer.log_start_offset)
        )
        if update:
            self.high_watermark = -1 if error else answer.high_watermark
            self.last_stable_offset = answer.last_stable_offset
            self.log_start_offset = answer.log_start_offset
        return respond

    def offsets_differ(self, high_watermark: int, last_stable_offset: int, log_start_offset: int) -> bool:
        """Whether these offsets are not the ones last sent: an answer without records, error,
        divergence or preferred replica goes into an incremental answer only then."""
        return (
            self.high_watermark != high_watermark
            or self.last_stable_offset != last_stable_offset
            or self.log_start_offset != log_start_offset
        )


@dataclass(slots=True, eq=False)
class FetchSession:
    id: int
    privileged: bool  # a follower's
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int  # the epoch the next incremental fetch must carry
    partitions: dict[PartitionKey, CachedPartition]  # in answer order (records-bearing ones move last)
    cached_size: int = -1  # the size the eviction keys were last computed with
    next_pos: int = 0  # the ``pos`` of the next partition added or moved last
    # The broker's reading state of the session (which partitions it may skip); opaque here.
    reader: object | None = None

    def place_last(self, cached: CachedPartition) -> None:
        cached.pos = self.next_pos
        self.next_pos += 1

    def evictable_key(self) -> tuple[bool, int, int]:
        return (self.privileged, self.cached_size, self.id)


class ContextKind(Enum):
    SESSION_ERROR = "session_error"
    SESSIONLESS = "sessionless"
    FULL = "full"
    INCREMENTAL = "incremental"


@dataclass(slots=True, eq=False)
class FetchContext:
    """How one Fetch is read and answered (Kafka's FetchContext subclasses as one record).

    ``partitions`` is what the broker reads, in order: the request's for sessionless and full
    fetches. An incremental one reads all of the session's, ``session.partitions`` with each one's
    cached request (``partitions`` is empty: a follower's session holds thousands).
    """

    kind: ContextKind
    partitions: list[tuple[PartitionKey, PartitionFetch]] = field(default_factory=list)
    error: ErrorCode = ErrorCode.NONE
    session: FetchSession | None = None
    expected_epoch: int = -1  # INCREMENTAL: the session's epoch when this context was made
    privileged: bool = False
    uses_topic_ids: bool = False


@dataclass(frozen=True, slots=True)
class SessionAnswer:
    """How to answer: top-level error, ``SessionId`` and which partitions to include."""

    error: ErrorCode
    session_id: int
    include: frozenset[PartitionKey] | None  # None: all of them


class FetchSessionCache:
    """Kafka's ``FetchSessionCache`` with ``FetchManager.newContext`` and the contexts' answers."""

    def __init__(
        self,
        *,
        new_session_id: Callable[[], int],
        max_slots: int = DEFAULT_CACHE_SLOTS,
        eviction_ms: int = DEFAULT_EVICTION_MS,
    ) -> None:
        self._new_session_id = new_session_id
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        self.sessions: dict[int, FetchSession] = {}
        self._evictable_by_privileged: set[int] = set()
        self._evictable_by_all: set[int] = set()
        self.num_partitions = 0  # NumIncrementalFetchPartitionsCached
        self.evictions = 0  # IncrementalFetchSessionEvictionsPerSec (a counter)

    def __len__(self) -> int:  # NumIncrementalFetchSessions
        return len(self.sessions)

    # -- the request side --------------------------------------------------------------------------

    def new_context(
        self,
        now_ms: int,
        *,
        session_id: int,
        epoch: int,
        uses_topic_ids: bool,
        privileged: bool,
        fetch_data: Iterable[tuple[PartitionKey, PartitionFetch]],
        forgotten: Iterable[PartitionKey] = (),
    ) -> FetchContext:
        """What a Fetch with these ``SessionId``/``SessionEpoch`` reads and how it is answered."""
        data = list(fetch_data)
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):  # a full fetch
            if session_id != INVALID_SESSION_ID:
                self.remove(session_id)
            if epoch == FINAL_EPOCH:
                return FetchContext(ContextKind.SESSIONLESS, data)
            return FetchContext(ContextKind.FULL, data, privileged=privileged, uses_topic_ids=uses_topic_ids)
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext(ContextKind.SESSION_ERROR, error=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext(ContextKind.SESSION_ERROR, error=ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return FetchContext(ContextKind.SESSION_ERROR, error=ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        for key, request in data:
            cached = session.partitions.get(key)
            if cached is None:
                cached = session.partitions[key] = CachedPartition(request)
                session.place_last(cached)
            else:
                cached.request = request
        for key in forgotten:
            session.partitions.pop(key, None)
        if not session.partitions:
            self.remove(session.id)
            return FetchContext(ContextKind.SESSIONLESS, data)
        self._touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return FetchContext(
            ContextKind.INCREMENTAL,
            [],  # the whole session is read: ``session.partitions``, with each one's cached request
            session=session,
            expected_epoch=session.epoch,
            privileged=session.privileged,
            uses_topic_ids=session.uses_topic_ids,
        )

    # -- the answer side ---------------------------------------------------------------------------

    def answer(
        self, context: FetchContext, now_ms: int, answers: Mapping[PartitionKey, PartitionAnswer]
    ) -> SessionAnswer:
        """How to answer ``context`` given what was read (``answers``: each partition read)."""
        if context.kind is ContextKind.SESSION_ERROR:
            return SessionAnswer(context.error, INVALID_SESSION_ID, frozenset())
        if context.kind is ContextKind.SESSIONLESS:
            return SessionAnswer(ErrorCode.NONE, INVALID_SESSION_ID, None)
        if context.kind is ContextKind.FULL:
            session_id = self.maybe_create(now_ms, context, answers)
            return SessionAnswer(ErrorCode.NONE, session_id, None)
        session = context.session
        assert session is not None
        if self.sessions.get(session.id) is not session or session.epoch != context.expected_epoch:
            # Another fetch of the session came in (or it was evicted) while this one waited.
            return SessionAnswer(ErrorCode.INVALID_FETCH_SESSION_EPOCH, INVALID_SESSION_ID, frozenset())
        include: set[PartitionKey] = set()
        moved: list[PartitionKey] = []
        cached_partitions = session.partitions
        for key, got in answers.items():  # what was read: the session's partitions, maybe fewer
            cached = cached_partitions.get(key)
            if cached is None:
                continue
            if cached.must_respond(got, update=True):
                include.add(key)
                if got.records_size > 0:
                    moved.append(key)  # to the end of the line, for fairness under max_bytes
        for key in moved:
            cached = session.partitions[key] = session.partitions.pop(key)
            session.place_last(cached)
        return SessionAnswer(ErrorCode.NONE, session.id, frozenset(include))

    # -- the cache ---------------------------------------------------------------------------------

    def maybe_create(
        self, now_ms: int, context: FetchContext, answers: Mapping[PartitionKey, PartitionAnswer]
    ) -> int:
        """Kafka's ``maybeCreateSession``: a new session's id, or 0 when no slot is free or can be
        freed."""
        size = len(context.partitions)
        if len(self.sessions) >= self.max_slots and not self._try_evict(
            context.privileged, (context.privileged, size, 0), now_ms
        ):
            return INVALID_SESSION_ID
        partitions: dict[PartitionKey, CachedPartition] = {}
        for key, request in context.partitions:
            cached = CachedPartition(request)
            got = answers.get(key)
            if got is not None:
                cached.must_respond(got, update=True)
            partitions[key] = cached
        session_id = self._new_session_id()
        while session_id <= 0 or session_id in self.sessions:
            session_id = self._new_session_id()
        session = FetchSession(
            id=session_id,
            privileged=context.privileged,
            uses_topic_ids=context.uses_topic_ids,
            creation_ms=now_ms,
            last_used_ms=now_ms,
            epoch=next_epoch(INITIAL_EPOCH),
            partitions=partitions,
        )
        for cached in partitions.values():
            session.place_last(cached)
        self.sessions[session_id] = session
        self._touch(session, now_ms)
        return session_id

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self._evictable_by_privileged.discard(session_id)
            self._evictable_by_all.discard(session_id)
            if session.cached_size >= 0:
                self.num_partitions -= session.cached_size
        return session

    def _touch(self, session: FetchSession, now_ms: int) -> None:
        session.last_used_ms = now_ms
        if session.cached_size >= 0:
            self.num_partitions -= session.cached_size
        self._evictable_by_privileged.discard(session.id)
        self._evictable_by_all.discard(session.id)
        session.cached_size = len(session.partitions)
        old_enough = now_ms - session.creation_ms > self.eviction_ms
        if not session.privileged or old_enough:
            self._evictable_by_privileged.add(session.id)
        if old_enough:
            self._evictable_by_all.add(session.id)
        self.num_partitions += session.cached_size

    def _try_evict(self, privileged: bool, key: tuple[bool, int, int], now_ms: int) -> bool:
        if not self.sessions:
            return False
        lru = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - lru.last_used_ms > self.eviction_ms:
            self.remove(lru.id)
            self.evictions += 1
            return True
        candidates = self._evictable_by_privileged if privileged else self._evictable_by_all
        if not candidates:
            return False
        victim = min((self.sessions[i] for i in candidates), key=FetchSession.evictable_key)
        if key < victim.evictable_key():
            return False
        self.remove(victim.id)
        self.evictions += 1
        return True
