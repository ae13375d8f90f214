"""A blocking reader of a KRaft quorum's *committed* log, over the raft protocol (no Spark here).

``QuorumReader(bootstrap)`` reads ``__cluster_metadata-0`` from the quorum's leader the way an
observer fetches it, but it holds no log and never truncates anything:

* the leader is found with DescribeQuorum (``AdminClient``: any bootstrap controller will do; its
  v2 ``Nodes`` give the leader's controller listener), and followed through leader changes
  (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, a lost connection);
* ``high_watermark()`` asks the leader (DescribeQuorum) for its high watermark;
* ``read(start, end)`` sends Fetch (v13-17, the leader's controller listener) with replica id -1
  and the zero directory id, ``MaxWaitMs`` 0, ``FetchOffset`` = the next offset wanted,
  ``CurrentLeaderEpoch`` = the leader's epoch and ``LastFetchedEpoch`` = the epoch of the batch
  before it (the leader's epoch at first: the end offset of the leader's current epoch is its log
  end, so any offset up to there passes the leader's divergence check). When the leader answers
  with a ``SnapshotId`` instead (the offset is below its log start because it took a snapshot and
  cleaned its log while the reader was behind, or the offset is 0 and it has a snapshot), the
  reader downloads that snapshot with FetchSnapshot (chunked by position until ``Size``), as an
  observer loads one, yields it, and continues after the snapshot's end offset.

Records below the high watermark are committed: every leader of this or a later epoch holds them,
identical, so after a leader change the reader carries on from where it stopped with the new
leader, never reading anything twice. It never yields a row at or above the highest high
watermark it has seen from a leader of an epoch at least as new as the one it reads from.

Rows in chunks: a ``LogChunk`` holds whole record batches (raw bytes, as in a segment file); the
first may begin before ``start`` and the last may run past ``end``, so a consumer keeps the records
with ``start <= offset < end`` (``LogChunk.iter_records``, or ``kraft.spark.arrow_log.decode_records``
with a row filter). A ``SnapshotChunk`` holds whole batches of one snapshot file (header and footer
control batches included); all of its records stand for offset ``snapshot end - 1``. A snapshot is
yielded by the read whose range contains that offset: if the whole range ``[start, end)`` has been
compacted into a snapshot ending after ``end``, the read yields nothing (the rows come with the
range holding the snapshot's last offset).

This module blocks and reads the clock; it belongs to the tools, never to the core or the server.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from kraft.client.admin import AdminClient
from kraft.client.connection import Address, AdminError, Connection, RetriableError, parse_bootstrap
from kraft.common.errors import CorruptRecordError, KraftError, RemoteProtocolError
from kraft.net import raft_codec
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import describe_quorum, fetch, fetch_snapshot
from kraft.raft.messages import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
)
from kraft.raft.types import ZERO_UUID, Endpoint, OffsetAndEpoch, ReplicaKey
from kraft.records.batch import Record, batch_crc_valid, iter_batch_headers, iter_batches

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_REQUEST_TIMEOUT_S = 5.0
DEFAULT_MAX_FETCH_BYTES = 4 * 1024 * 1024
# A downloaded snapshot stays in memory up to this size, then spills to a temporary file.
SNAPSHOT_SPOOL_BYTES = 64 * 1024 * 1024
# Snapshot bytes are yielded in chunks of whole batches of about this size.
SNAPSHOT_CHUNK_BYTES = 4 * 1024 * 1024
# Fetch v13 is the first to name the topic by id (and the first the servers accept); v17 the last.
MIN_FETCH_VERSION = 13
MAX_FETCH_VERSION = 17
READER_KEY = ReplicaKey(-1, ZERO_UUID)
CLIENT_ID = "kraft-quorum-reader"

# Partition errors that mean "not (or no longer) the leader of your epoch": find the leader again.
_LEADER_ERRORS = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.BROKER_NOT_AVAILABLE,  # a leader shutting down
    }
)
_BACKOFF_S = 0.02
_BACKOFF_MAX_S = 0.5


class QuorumReadError(KraftError):
    """The committed log could not be read (no leader in time, or an answer that makes no sense)."""


class OffsetCompactedError(QuorumReadError):
    """The offset is no longer in the leader's log, only in its snapshot ``snapshot_id`` (raised
    by ``read(..., include_snapshots=False)``)."""

    def __init__(self, message: str, offset: int, snapshot_id: OffsetAndEpoch, log_start_offset: int) -> None:
        super().__init__(message)
        self.offset = offset
        self.snapshot_id = snapshot_id
        self.log_start_offset = log_start_offset

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.offset, self.snapshot_id, self.log_start_offset))


@dataclass(frozen=True, slots=True)
class HighWatermark:
    """``high_watermark``: the highest the reader has seen (a new leader may briefly report a lower
    one, or none); ``leader_id``/``leader_epoch``: the leader that answered; ``log_start_offset``:
    its log start offset as of the reader's last Fetch (None before any)."""

    high_watermark: int
    leader_id: int
    leader_epoch: int
    log_start_offset: int | None


@dataclass(frozen=True, slots=True)
class LeaderHint:
    """What one reader knows, to start another without asking again (picklable): the leader, its
    epoch, its controller listener and a high watermark seen from it."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class LogChunk:
    """Whole record batches of the log; the read's rows are those with ``start <= offset < end``."""

    records: bytes
    start: int
    end: int
    leader_id: int

    def iter_records(self) -> Iterator[tuple[int, Record]]:
        """(batch leader epoch, record) of each record with ``start <= offset < end``, control
        records included."""
        for batch in iter_batches(self.records):
            for record in batch.records:
                if self.start <= record.offset < self.end:
                    yield batch.partition_leader_epoch, record


@dataclass(frozen=True, slots=True)
class SnapshotChunk:
    """Whole batches of snapshot ``snapshot_id``, from byte ``position`` of its ``size``."""

    snapshot_id: OffsetAndEpoch
    records: bytes
    position: int
    size: int
    leader_id: int

    @property
    def offset(self) -> int:
        """The offset every record of the snapshot stands for: its end offset - 1."""
        return self.snapshot_id.offset - 1

    @property
    def last(self) -> bool:
        return self.position + len(self.records) >= self.size


Chunk = LogChunk | SnapshotChunk


class _Retry(Exception):
    """Internal: drop the connection, back off and try again (the message says why)."""


class QuorumReader:
    """Reads the committed log of the quorum reachable through ``bootstrap`` (see the module doc).

    Args:
        bootstrap: ``host:port,...`` of any controllers (or a list of ``Address``).
        timeout_s: how long a call keeps retrying (leader changes, lost connections, an election)
            without making progress before it fails with ``QuorumReadError``.
        request_timeout_s: the deadline of one request on one connection.
        max_fetch_bytes: ``MaxBytes`` of each Fetch and FetchSnapshot.
        cluster_id: sent in Fetch (None: not checked by the leader).
        leader_hint: where to start (from another reader's ``leader_hint()``); its high watermark
            counts as seen.

    Not thread-safe; ``close()`` (or a ``with`` block) releases the connection.
    """

    def __init__(
        self,
        bootstrap: str | Sequence[Address],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
        max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES,
        cluster_id: str | None = None,
        leader_hint: LeaderHint | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._bootstrap = parse_bootstrap(bootstrap) if isinstance(bootstrap, str) else list(bootstrap)
        if not self._bootstrap:
            raise QuorumReadError("no bootstrap address given")
        if timeout_s <= 0 or request_timeout_s <= 0 or max_fetch_bytes <= 0:
            raise ValueError("timeout_s, request_timeout_s and max_fetch_bytes must be positive")
        self._timeout_s = timeout_s
        self._request_timeout_s = request_timeout_s
        self._max_fetch_bytes = max_fetch_bytes
        self._cluster_id = cluster_id
        self._clock = clock
        self._sleep = sleep
        self._addresses: dict[int, Address] = {}
        self._leader_id: int | None = None
        self._epoch = -1
        self._committed = 0
        self._log_start: int | None = None
        self._conn: Connection | None = None
        self._conn_node: int | None = None
        if leader_hint is not None:
            self._addresses[leader_hint.leader_id] = Address(leader_hint.host, leader_hint.port)
            self._note_leader(leader_hint.leader_id, leader_hint.leader_epoch)
            self._committed = max(0, leader_hint.high_watermark)

    # ------------------------------------------------------------------------------------------
    # Public

    def __enter__(self) -> QuorumReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._drop()

    @property
    def committed(self) -> int:
        """The highest high watermark seen so far (0 before any)."""
        return self._committed

    @property
    def leader_id(self) -> int | None:
        return self._leader_id

    def leader_hint(self) -> LeaderHint | None:
        """What this reader knows about the leader, for another reader (None: nothing yet)."""
        leader = self._leader_id
        if leader is None or leader not in self._addresses or self._epoch < 0:
            return None
        address = self._addresses[leader]
        return LeaderHint(leader, self._epoch, self._committed, address.host, address.port)

    def high_watermark(self) -> HighWatermark:
        """The leader's high watermark (DescribeQuorum sent to the leader), at least the highest
        seen before.

        Raises:
            QuorumReadError: no leader answered within ``timeout_s``.
        """
        deadline = self._clock() + self._timeout_s
        attempt = 0
        while True:
            try:
                response = self._describe(self._connection(deadline))
                if response.error_code != ErrorCode.NONE:
                    raise _Retry(f"DescribeQuorum failed: {_name(response.error_code)}")
                if response.partition_error_code != ErrorCode.NONE:
                    if response.partition_error_code not in _LEADER_ERRORS:
                        raise QuorumReadError(
                            f"DescribeQuorum failed: {_name(response.partition_error_code)} "
                            f"{response.partition_error_message or ''}".rstrip()
                        )
                    self._note_leader(response.leader_id, response.leader_epoch)
                    self._leader_id = None  # ask the quorum afresh
                    raise _Retry(f"{_name(response.partition_error_code)} from node {self._conn_node}")
                self._absorb_describe(response)
                if response.leader_epoch < self._epoch:
                    self._leader_id = None
                    raise _Retry(f"a stale answer (epoch {response.leader_epoch} < {self._epoch})")
                return HighWatermark(
                    self._committed, response.leader_id, response.leader_epoch, self._log_start
                )
            except (_Retry, RetriableError, RemoteProtocolError) as e:
                self._lost(e)
                self._backoff(attempt, deadline, f"the high watermark: {e}")
                attempt += 1

    def read(self, start: int, end: int | None = None, *, include_snapshots: bool = True) -> Iterator[Chunk]:
        """The committed log from offset ``start`` up to ``end`` (exclusive; default: the current
        high watermark), as chunks in offset order (see the module docstring).

        An ``end`` above the high watermark seen so far waits (up to ``timeout_s``) until the
        quorum commits it. With ``include_snapshots=False``, reaching an offset that only a
        snapshot holds raises ``OffsetCompactedError`` instead of yielding the snapshot.

        Raises:
            QuorumReadError: no progress within ``timeout_s`` (no leader, or the leader's answers
                keep failing), or an answer that contradicts the protocol.
            OffsetCompactedError: see ``include_snapshots``.
        """
        if start < 0:
            raise ValueError(f"start must be >= 0, got {start}")
        if end is None:
            end = self.high_watermark().high_watermark
        elif end > self._committed:
            self._await_committed(end)
        return self._read(start, end, include_snapshots)

    def snapshot_at(self, offset: int) -> OffsetAndEpoch | None:
        """The snapshot a read from ``offset`` would begin with (what the leader answers a Fetch
        there with), or None if the log holds ``offset``. Besides offsets below the log start,
        offset 0 gets the leader's latest snapshot whenever it has one other than the bootstrap
        checkpoint (Kafka's rule for an empty fetcher), even if its log still starts at 0.

        Raises:
            QuorumReadError: no leader answered within ``timeout_s``.
        """
        deadline = self._clock() + self._timeout_s
        attempt = 0
        last_epoch: int | None = None
        while True:
            try:
                conn = self._connection(deadline)
                fetched_epoch = self._epoch if last_epoch is None else min(last_epoch, self._epoch)
                response = self._fetch(conn, offset, fetched_epoch, max_bytes=1)
                self._check_fetch(response)
                sid = response.snapshot_id
                if sid is not None and sid.offset == offset and sid.epoch != fetched_epoch:
                    last_epoch = sid.epoch
                    continue
                diverging = response.diverging_epoch
                if diverging is not None and 0 <= diverging.epoch != fetched_epoch:
                    last_epoch = diverging.epoch
                    continue
                return sid if sid is not None and sid.offset > offset else None
            except (_Retry, RetriableError, RemoteProtocolError) as e:
                self._lost(e)
                self._backoff(attempt, deadline, f"the leader's answer at offset {offset}: {e}")
                attempt += 1

    # ------------------------------------------------------------------------------------------
    # Reading

    def _await_committed(self, end: int) -> None:
        deadline = self._clock() + self._timeout_s
        attempt = 0
        while self.high_watermark().high_watermark < end:
            self._backoff(
                attempt, deadline, f"offset {end} to be committed (high watermark {self._committed})"
            )
            attempt += 1

    def _read(self, start: int, end: int, include_snapshots: bool) -> Iterator[Chunk]:
        pos = start
        last_epoch: int | None = None  # epoch of the batch before ``pos``, once known
        deadline = self._clock() + self._timeout_s
        attempt = 0
        while pos < end:
            try:
                conn = self._connection(deadline)
                epoch = self._epoch
                fetched_epoch = epoch if last_epoch is None else min(last_epoch, epoch)
                response = self._fetch(conn, pos, fetched_epoch)
                leader = self._check_fetch(response)
                if response.diverging_epoch is not None:
                    diverging = response.diverging_epoch
                    if 0 <= diverging.epoch != fetched_epoch and diverging.offset >= pos:
                        # The leader's log has no entry of our guessed epoch: use the epoch it
                        # says covers ``pos`` (e.g. a new leader before its first append).
                        last_epoch = diverging.epoch
                        continue
                    raise QuorumReadError(
                        f"node {leader} reports a divergence at {diverging} for offset {pos} "
                        f"(last fetched epoch {fetched_epoch}): its log does not hold committed offset {pos}"
                    )
                if response.snapshot_id is not None:
                    sid = response.snapshot_id
                    if sid.offset == pos and sid.epoch != fetched_epoch:
                        last_epoch = sid.epoch  # at the log start: the snapshot's epoch precedes it
                        continue
                    if sid.offset <= pos:
                        raise QuorumReadError(
                            f"node {leader} answers offset {pos} (last fetched epoch {fetched_epoch}) "
                            f"with snapshot {sid}, which does not reach past it"
                        )
                    if not include_snapshots:
                        raise OffsetCompactedError(
                            f"offset {pos} is no longer in the log of leader {leader} (log start "
                            f"{response.log_start_offset}): its records are only in snapshot "
                            f"{sid.offset}-{sid.epoch}",
                            pos,
                            sid,
                            response.log_start_offset,
                        )
                    if sid.offset > end:
                        return  # [pos, end) lives only in a snapshot whose rows belong after ``end``
                    spool, size = self._download(conn, sid)
                    try:
                        yield from _snapshot_chunks(spool, sid, size, leader)
                    finally:
                        spool.close()
                    pos, last_epoch = sid.offset, sid.epoch
                    deadline = self._clock() + self._timeout_s
                    attempt = 0
                    continue
                chunk, next_pos, next_epoch = _log_chunk(response.records, pos, end, leader)
                yield chunk
                pos, last_epoch = next_pos, next_epoch
                deadline = self._clock() + self._timeout_s
                attempt = 0
            except (_Retry, RetriableError, RemoteProtocolError) as e:
                self._lost(e)
                self._backoff(attempt, deadline, f"offset {pos}: {e}")
                attempt += 1

    def _check_fetch(self, response: FetchResponse) -> int:
        """The answering leader's id, after the error checks; updates what the reader knows."""
        if response.error_code != ErrorCode.NONE:
            if response.error_code in _LEADER_ERRORS or response.error_code == ErrorCode.REQUEST_TIMED_OUT:
                raise _Retry(f"Fetch failed: {_name(response.error_code)}")
            raise QuorumReadError(f"node {self._conn_node} refused Fetch: {_name(response.error_code)}")
        error = response.partition_error_code
        if error in _LEADER_ERRORS:
            self._note_leader(
                response.current_leader_id, response.current_leader_epoch, response.leader_endpoints
            )
            if self._conn_node == self._leader_id:
                self._leader_id = None  # the node names itself or nobody: ask the quorum
            raise _Retry(
                f"{_name(error)} from node {self._conn_node} (it knows leader "
                f"{response.current_leader_id} in epoch {response.current_leader_epoch})"
            )
        if error != ErrorCode.NONE:
            raise QuorumReadError(f"node {self._conn_node} refused Fetch: {_name(error)}")
        leader = self._conn_node if self._conn_node is not None else response.current_leader_id
        self._committed = max(self._committed, response.high_watermark)
        self._log_start = response.log_start_offset
        return leader

    def _download(self, conn: Connection, sid: OffsetAndEpoch) -> tuple[IO[bytes], int]:
        """The whole snapshot ``sid`` (FetchSnapshot by position until its size), spooled. Each
        request has the connection's timeout; a failure starts the snapshot over (after a new
        Fetch, which may name a newer snapshot), so that nothing of a vanished one is yielded.

        Raises:
            _Retry: the leader no longer has it (Fetch will say which snapshot now), or is no
                longer the leader.
        """
        version = conn.version_for(fetch_snapshot.API)
        if version is None:
            raise QuorumReadError(f"node {self._conn_node} does not serve FetchSnapshot")
        spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SNAPSHOT_SPOOL_BYTES)  # noqa: SIM115
        try:
            position = 0
            size: int | None = None
            while size is None or position < size:
                request = FetchSnapshotRequest(
                    cluster_id=self._cluster_id,
                    replica_key=READER_KEY,
                    current_leader_epoch=self._epoch,
                    snapshot_id=sid,
                    position=position,
                    max_bytes=self._max_fetch_bytes,
                )
                body = conn.send(fetch_snapshot.API, version, raft_codec.encode_request(request, version))
                response = raft_codec.decode_response(raft_codec.FETCH_SNAPSHOT_KEY, body, listener_name="")
                assert isinstance(response, FetchSnapshotResponse)
                size = self._check_snapshot_chunk(response, sid, position, size)
                spool.write(response.unaligned_records)
                position += len(response.unaligned_records)
            spool.seek(0)
            return spool, size
        except BaseException:
            spool.close()
            raise

    def _check_snapshot_chunk(
        self, response: FetchSnapshotResponse, sid: OffsetAndEpoch, position: int, size: int | None
    ) -> int:
        if response.error_code != ErrorCode.NONE:
            raise _Retry(f"FetchSnapshot failed: {_name(response.error_code)}")
        error = response.partition_error_code
        if error in _LEADER_ERRORS:
            self._note_leader(
                response.current_leader_id, response.current_leader_epoch, response.leader_endpoints
            )
            raise _Retry(f"{_name(error)} from node {self._conn_node} during a snapshot download")
        if error == ErrorCode.SNAPSHOT_NOT_FOUND:
            raise _Retry(f"snapshot {sid} is gone (cleaned after a newer one)")
        if error != ErrorCode.NONE:
            raise QuorumReadError(f"FetchSnapshot {sid} at position {position} failed: {_name(error)}")
        if response.snapshot_id != sid or response.position != position:
            raise QuorumReadError(
                f"FetchSnapshot for {sid} at {position} answered "
                f"{response.snapshot_id} at {response.position}"
            )
        if size is not None and response.size != size:
            raise QuorumReadError(f"snapshot {sid} changed size from {size} to {response.size}")
        if not response.unaligned_records and position < response.size:
            raise QuorumReadError(f"empty FetchSnapshot chunk for {sid} at {position} of {response.size}")
        if position + len(response.unaligned_records) > response.size:
            raise QuorumReadError(f"snapshot {sid} chunk at {position} runs past its size {response.size}")
        return response.size

    # ------------------------------------------------------------------------------------------
    # Requests

    def _fetch(
        self, conn: Connection, offset: int, last_fetched_epoch: int, max_bytes: int | None = None
    ) -> FetchResponse:
        version = conn.version_for(fetch.API, highest=MAX_FETCH_VERSION)
        if version is None or version < MIN_FETCH_VERSION:
            raise QuorumReadError(f"node {self._conn_node} does not serve Fetch v{MIN_FETCH_VERSION}+")
        request = FetchRequest(
            cluster_id=self._cluster_id,
            replica_key=READER_KEY,
            max_wait_ms=0,
            fetch_offset=offset,
            last_fetched_epoch=last_fetched_epoch,
            current_leader_epoch=self._epoch,
            max_bytes=self._max_fetch_bytes if max_bytes is None else max_bytes,
        )
        body = conn.send(fetch.API, version, raft_codec.encode_request(request, version))
        response = raft_codec.decode_response(raft_codec.FETCH_KEY, body, listener_name="")
        assert isinstance(response, FetchResponse)
        return response

    def _describe(self, conn: Connection) -> DescribeQuorumResponse:
        version = conn.version_for(describe_quorum.API)
        if version is None:
            raise QuorumReadError(f"node {self._conn_node} does not serve DescribeQuorum")
        body = conn.send(
            describe_quorum.API, version, raft_codec.encode_request(DescribeQuorumRequest(), version)
        )
        response = raft_codec.decode_response(raft_codec.DESCRIBE_QUORUM_KEY, body, listener_name="")
        assert isinstance(response, DescribeQuorumResponse)
        return response

    # ------------------------------------------------------------------------------------------
    # The leader and the connection to it

    def _connection(self, deadline: float) -> Connection:
        """A connection to the leader, finding it first if needed."""
        if self._conn is not None and self._conn_node == self._leader_id:
            return self._conn
        self._drop()
        if self._leader_id is None or self._leader_id not in self._addresses:
            self._discover(deadline)
        leader = self._leader_id
        assert leader is not None
        address = self._addresses.get(leader)
        if address is None:
            raise QuorumReadError(
                f"the quorum names node {leader} as leader but not its controller endpoint "
                "(DescribeQuorum v2 Nodes): the reader cannot reach it"
            )
        timeout = max(0.05, min(self._request_timeout_s, deadline - self._clock()))
        self._conn = Connection(address, timeout, client_id=CLIENT_ID)
        self._conn_node = leader
        return self._conn

    def _discover(self, deadline: float) -> None:
        """DescribeQuorum through any controller (``AdminClient`` follows the leader hints)."""
        remaining_ms = int((deadline - self._clock()) * 1000)
        if remaining_ms <= 0:
            raise _Retry("no time left to find the leader")
        known = [a for _, a in sorted(self._addresses.items())]
        candidates = [*self._bootstrap, *(a for a in known if a not in self._bootstrap)]
        client = AdminClient(
            candidates,
            timeout_ms=remaining_ms,
            request_timeout_ms=int(self._request_timeout_s * 1000),
            retry_backoff_ms=int(_BACKOFF_S * 1000),
            retry_backoff_max_ms=int(_BACKOFF_MAX_S * 1000),
            clock=self._clock,
            sleep=self._sleep,
        )
        try:
            info = client.describe_quorum()
        except AdminError as e:
            raise QuorumReadError(f"no leader of the quorum found: {e}") from None
        for node_id, endpoints in info.nodes.items():
            if endpoints:
                self._addresses[node_id] = Address(endpoints[0].host, endpoints[0].port)
        if info.leader_epoch < self._epoch:
            raise _Retry(f"the quorum answered epoch {info.leader_epoch}, below the known {self._epoch}")
        self._note_leader(info.leader_id, info.leader_epoch)
        self._committed = max(self._committed, info.high_watermark)
        if self._leader_id is None:
            raise _Retry("no leader elected yet")

    def _absorb_describe(self, response: DescribeQuorumResponse) -> None:
        for node_id, endpoints in response.nodes.items():
            if endpoints:
                self._addresses[node_id] = Address(endpoints[0].host, endpoints[0].port)
        if response.leader_epoch >= self._epoch:
            self._note_leader(response.leader_id, response.leader_epoch)
            self._committed = max(self._committed, response.high_watermark)

    def _note_leader(self, leader_id: int, epoch: int, endpoints: tuple[Endpoint, ...] = ()) -> None:
        """Takes a leader hint if it is at least as new as what the reader knows."""
        if epoch < self._epoch or epoch < 0:
            return
        if leader_id >= 0 and endpoints:
            self._addresses[leader_id] = Address(endpoints[0].host, endpoints[0].port)
        if epoch > self._epoch:
            self._epoch = epoch
            self._leader_id = leader_id if leader_id >= 0 else None
        elif leader_id >= 0:
            self._leader_id = leader_id

    def _lost(self, error: Exception) -> None:
        """After a failed attempt: drop the connection; if the leader itself could not be reached
        (a lost connection, a timeout), ask the quorum who leads before trying again."""
        if not isinstance(error, _Retry):
            self._leader_id = None
        self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = None
        self._conn_node = None

    def _backoff(self, attempt: int, deadline: float, waiting_for: str) -> None:
        now = self._clock()
        if now >= deadline:
            raise QuorumReadError(f"timed out after {self._timeout_s:g} s waiting for {waiting_for}")
        self._sleep(min(_BACKOFF_MAX_S, _BACKOFF_S * 2 ** min(attempt, 10), max(0.0, deadline - now)))


def _log_chunk(data: bytes, pos: int, end: int, leader: int) -> tuple[LogChunk, int, int]:
    """The chunk of a Fetch answer for a read at ``pos`` (whole batches up to the one holding
    ``end - 1``), the next offset and the epoch of the last batch kept.

    Raises:
        _Retry: no records, or bytes that do not check out (a retry asks again).
        QuorumReadError: batches that are not the log at ``pos`` (a broken leader).
    """
    if not data:
        raise _Retry(f"node {leader} returned no records at offset {pos}, below the high watermark")
    cut = 0
    expected: int | None = None
    epoch = -1
    try:
        for position, header in iter_batch_headers(data):
            if expected is None:
                if not header.base_offset <= pos < header.next_offset:
                    raise QuorumReadError(
                        f"node {leader} answered a Fetch at offset {pos} with a batch of offsets "
                        f"{header.base_offset}-{header.last_offset}"
                    )
            elif header.base_offset != expected:
                raise QuorumReadError(
                    f"node {leader} returned a batch at offset {header.base_offset} where {expected} follows"
                )
            if header.base_offset >= end:
                break
            if not batch_crc_valid(data, position, header):
                if expected is None:
                    raise _Retry(
                        f"CRC mismatch in the batch at offset {header.base_offset} from node {leader}"
                    )
                break  # keep what checked out; the next Fetch asks again from there
            cut = position + header.size_in_bytes
            expected = header.next_offset
            epoch = header.partition_leader_epoch
            if expected >= end:
                break
    except CorruptRecordError as e:
        if expected is None:
            raise _Retry(f"unreadable records from node {leader}: {e}") from None
    if expected is None:
        raise _Retry(f"node {leader} returned no whole batch at offset {pos}")
    return LogChunk(data[:cut], pos, end, leader), expected, epoch


def _snapshot_chunks(
    spool: IO[bytes], sid: OffsetAndEpoch, size: int, leader: int
) -> Iterator[SnapshotChunk]:
    """The spooled snapshot in chunks of whole batches."""
    position = 0
    pending = b""
    while True:
        more = spool.read(SNAPSHOT_CHUNK_BYTES)
        data = pending + more if pending else more
        if not data:
            return
        cut = 0
        try:
            for pos, header in iter_batch_headers(data):
                cut = pos + header.size_in_bytes
        except CorruptRecordError as e:
            raise QuorumReadError(f"snapshot {sid} from node {leader}: {e} (after byte {position})") from None
        if not more and cut < len(data):
            raise QuorumReadError(
                f"snapshot {sid} from node {leader} ends inside a batch at byte {position + cut} of {size}"
            )
        if cut:
            yield SnapshotChunk(sid, data[:cut], position, size, leader)
            position += cut
        pending = data[cut:]
        if not more:
            return


def _name(code: int) -> str:
    known = ErrorCode.from_wire(code)
    return f"error code {code}" if known is None else known.name


__all__ = [
    "Chunk",
    "HighWatermark",
    "LeaderHint",
    "LogChunk",
    "OffsetCompactedError",
    "QuorumReadError",
    "QuorumReader",
    "SnapshotChunk",
]
