"""The committed log of a live quorum, tailed by a real raft observer: ``QuorumTail``.

``QuorumTail(bootstrap)`` is the shell around a node (``kraft.node.build_node``: a lone
``kraft.raft.node.RaftNode``, as a broker's metadata replica is) that is an observer of
``__cluster_metadata-0``, the way a broker follows the quorum: no node id (replica id -1; or a
configured ``node_id``), ``controller.quorum.bootstrap.servers`` = the given controllers (so the core
finds the leader by fetching from any of them and follows NOT_LEADER_OR_FOLLOWER, new epochs and
lost connections by itself), a registered ``RaftListener`` that sees only committed data, in offset
order, each batch once (and a snapshot when the leader has cleaned its log below where the tail
is). The core runs on ``kraft.server.driver.LoopDriver`` over a ``kraft.net.channel.PeerChannel``,
both on the tail's own event loop thread; the caller's threads only read what the listener kept.

What it keeps, and why a ``MemoryLog``: the core's log holds what the observer fetched; the
listener copies each committed batch (its raw bytes, as in a segment file) and each loaded
snapshot into the tail's buffer, and the shell then trims the log below what was delivered: it
writes a local snapshot there (``RaftNode.create_snapshot``: header and footer only, never served
or loaded, since nobody fetches from an observer and the listener is already past it) and the core
deletes the log before it (``_maybe_delete_before_snapshot``). So nothing is kept twice for long,
there are no files to clean up or fsync, and a restarted tail starts over from the leader, as the
stream needs anyway. The buffer holds what the consumer has not released (``release``); above
``max_buffered_bytes`` the tail stops fetching (it holds its next Fetch back) until the consumer
releases some, unless a caller is waiting for offsets it has not delivered yet. Memory is thus
bounded by about ``max_buffered_bytes`` + ``max_fetch_bytes`` + one trim step (1 MiB).

Guarantees (the core's listener contract, spec raft.md 1.4): ``high_watermark`` only grows and
never passes a high watermark the leader reported; everything below it, from where the consumer
has released, is readable with ``read(start, end)`` as chunks in offset order: ``LogChunk``\\ s of
whole record batches (the first may begin before ``start``, the last may run past ``end``: keep
the records with ``start <= offset < end``) and ``SnapshotChunk``\\ s of a snapshot's batches
(header and footer control batches included), whose records all stand for its end offset - 1.
After a leader change the core carries on from its log end with the new leader, so nothing is
delivered twice or skipped.

Where a snapshot stands: a fresh tail begins with the leader's latest snapshot when the leader has
one besides ``bootstrap.checkpoint`` (Kafka's rule for a Fetch at offset 0), and a tail that fell
behind the leader's log start (it was held back meanwhile) gets the leader's snapshot next. Either
covers the offsets from where the tail was up to the snapshot's end; a read whose range begins in
there yields the snapshot when its end offset - 1 is in the range, else nothing (its rows belong to
the range holding that offset), and with ``include_snapshots=False`` raises
``OffsetCompactedError``.

Without a node id the leader answers every Fetch at once (it cannot tell what a reader without an
id already knows, so it never parks it): when an answer brings nothing new, the tail holds its next
Fetch ``poll_interval_ms`` instead of spinning. With a ``node_id`` the leader long-polls it as any
observer (and lists it in DescribeQuorum).

This module blocks, reads the clock and starts a thread; it belongs to the clients, never to the
core or the server.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import random
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kraft.client.admin import AdminClient
from kraft.client.connection import Address, AdminError, parse_bootstrap
from kraft.common.errors import KraftError
from kraft.common.uuids import ZERO_UUID
from kraft.net.channel import PeerAddress, PeerChannel
from kraft.node.build import NodeConfig, NodeStorage, build_node
from kraft.node.node import Node, NodeEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import REGISTRY
from kraft.raft.config import QuorumConfig
from kraft.raft.listener import CommittedBatch, SnapshotReader
from kraft.raft.log import MemoryLog
from kraft.raft.messages import Envelope, FetchRequest, FetchResponse, FetchSnapshotRequest
from kraft.raft.store import MemoryElectionStore
from kraft.raft.types import Endpoint, LeaderAndEpoch, OffsetAndEpoch
from kraft.records.batch import Record, iter_batch_headers, iter_batches, read_batch_header
from kraft.server.driver import LoopDriver, NodeView, WallClock

log = logging.getLogger("kraft.client.quorum_tail")

DEFAULT_TIMEOUT_S = 30.0
# One Fetch's worth is appended and delivered in one poll of the core, on the tail's loop thread:
# kept small, so that catching up on a long log holds the loop (and the GIL) in short steps.
DEFAULT_MAX_FETCH_BYTES = 1024 * 1024
DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024
DEFAULT_POLL_INTERVAL_MS = 100
# Chunks handed out hold whole batches of about this many bytes.
CHUNK_BYTES = 4 * 1024 * 1024
# The log is trimmed (a local snapshot, then the core's log cleaning) every this many delivered bytes.
TRIM_BYTES = 1024 * 1024
LISTENER_NAME = "CONTROLLER"  # only a label: the endpoints come from the controllers' answers


class QuorumReadError(KraftError):
    """The committed log could not be read: no leader in time, no progress, or the tail stopped."""


class OffsetCompactedError(QuorumReadError):
    """The offset is no longer in the leader's log, only in its snapshot ``snapshot_id`` (raised
    by ``read(..., include_snapshots=False)``); ``log_start_offset`` is where the log resumes."""

    def __init__(self, message: str, offset: int, snapshot_id: OffsetAndEpoch, log_start_offset: int) -> None:
        super().__init__(message)
        self.offset = offset
        self.snapshot_id = snapshot_id
        self.log_start_offset = log_start_offset

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.offset, self.snapshot_id, self.log_start_offset))


class OffsetReleasedError(QuorumReadError):
    """The offset is below what this tail keeps (the consumer released it, or the tail began
    after it): a new tail reads it again from the leader."""


@dataclass(frozen=True, slots=True)
class LogChunk:
    """Whole record batches of the log; the read's rows are those with ``start <= offset < end``."""

    records: bytes
    start: int
    end: int

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

    @property
    def offset(self) -> int:
        """The offset every record of the snapshot stands for: its end offset - 1."""
        return self.snapshot_id.offset - 1

    @property
    def last(self) -> bool:
        return self.position + len(self.records) >= self.size


Chunk = LogChunk | SnapshotChunk


@dataclass(frozen=True, slots=True)
class _Batch:
    """A committed batch as delivered: offsets ``[first, end)``; ``raw`` is the whole batch (it
    may begin before ``first`` when a snapshot ended inside it)."""

    first: int
    end: int
    raw: bytes


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """A snapshot that took over offsets ``[first, end)`` (``end`` = its end offset)."""

    first: int
    end: int
    snapshot_id: OffsetAndEpoch
    raw: bytes


_Item = _Batch | _Snapshot


class TailBuffer:
    """The listener: keeps the committed batches and snapshots the consumer has not released.

    The core calls ``handle_*`` on the tail's loop thread; the consumer's threads call ``read``,
    ``release`` and the waits. One lock and condition guard everything.
    """

    def __init__(self, log: MemoryLog, *, from_offset: int = 0, max_buffered_bytes: int) -> None:
        self._log = log
        self._cond = threading.Condition()
        self._items: list[_Item] = []
        self._ends: list[int] = []  # _items[i].end, for bisect
        self._bytes = 0
        self._floor = from_offset  # nothing below it is kept (released, or never wanted)
        self._next = 0  # the next offset to be delivered: the tail's high watermark
        self._wanted = -1  # the highest offset a waiting consumer needs delivered
        self.max_buffered_bytes = max_buffered_bytes
        self.leader = LeaderAndEpoch(None, 0)
        # Where the core's log may be trimmed: (end offset, epoch) of the last delivered batch.
        self.trim_point: OffsetAndEpoch | None = None
        self.delivered_since_trim = 0
        self.snapshots_loaded = 0
        self.failure: BaseException | None = None

    # -- RaftListener (the tail's loop thread) ---------------------------------------------------

    def handle_commit(self, batch: CommittedBatch) -> None:
        data = self._log.read(batch.base_offset, 1)
        header = read_batch_header(data)
        if header is None or header.base_offset > batch.base_offset:
            raise QuorumReadError(f"the log does not hold the committed batch at {batch.base_offset}")
        raw = bytes(data[: header.size_in_bytes])
        with self._cond:
            self._append(_Batch(self._next, batch.last_offset + 1, raw))
            self._next = batch.last_offset + 1
            self.trim_point = OffsetAndEpoch(self._next, batch.epoch)
            self.delivered_since_trim += len(raw)
            self._cond.notify_all()

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        sid = reader.snapshot_id
        snapshot = self._log.read_snapshot(sid)
        if snapshot is None:
            raise QuorumReadError(f"snapshot {sid} was loaded but cannot be read")
        raw = snapshot.read(0, snapshot.size_in_bytes())
        with self._cond:
            self._append(_Snapshot(min(self._next, sid.offset), sid.offset, sid, raw))
            self._next = max(self._next, sid.offset)
            self.trim_point = None  # the log starts at the snapshot now
            self.snapshots_loaded += 1
            self._cond.notify_all()

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leader = leader

    def _append(self, item: _Item) -> None:
        # A snapshot's rows stand at its end - 1: it is wanted if that offset is at the floor or above.
        if item.end <= self._floor:
            return
        self._items.append(item)
        self._ends.append(item.end)
        self._bytes += len(item.raw)

    # -- flow control (the loop thread) ----------------------------------------------------------

    @property
    def paused(self) -> bool:
        """Over the memory bound with nobody waiting for more: fetch nothing for now."""
        with self._cond:
            return self._bytes > self.max_buffered_bytes and self._wanted <= self._next

    # -- the consumer (any thread) ---------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        with self._cond:
            return self._next

    @property
    def floor(self) -> int:
        with self._cond:
            return self._floor

    @property
    def buffered_bytes(self) -> int:
        with self._cond:
            return self._bytes

    def release(self, below: int) -> None:
        """The consumer will not read below ``below`` again: drop what lies wholly below it."""
        with self._cond:
            if below <= self._floor:
                return
            self._floor = below
            cut = bisect.bisect_right(self._ends, below)
            for item in self._items[:cut]:
                self._bytes -= len(item.raw)
            del self._items[:cut]
            del self._ends[:cut]

    def fail(self, error: BaseException) -> None:
        with self._cond:
            self.failure = error
            self._cond.notify_all()

    def wait_for(self, offset: int, timeout_s: float, on_want: Any = None) -> int:
        """Waits until everything below ``offset`` was delivered; the deadline moves on with each
        delivery (a tail catching up makes progress). Returns the high watermark.

        Raises:
            QuorumReadError: no progress for ``timeout_s``, or the tail stopped.
        """
        with self._cond:
            if self._next >= offset:
                return self._next
            self._wanted = max(self._wanted, offset)
        if on_want is not None:
            on_want()  # a paused tail fetches again for the waiter
        try:
            with self._cond:
                progress = self._next
                deadline = time.monotonic() + timeout_s
                while self._next < offset:
                    if self.failure is not None:
                        raise QuorumReadError(f"the quorum tail stopped: {self.failure}")
                    if self._next > progress:
                        progress, deadline = self._next, time.monotonic() + timeout_s
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise QuorumReadError(
                            f"timed out after {timeout_s:g} s waiting for offset {offset} to be committed "
                            f"(high watermark {self._next})"
                        )
                    self._cond.wait(min(remaining, 0.5))
                return self._next
        finally:
            with self._cond:
                if self._wanted <= self._next:
                    self._wanted = -1

    def snapshot_at(self, offset: int) -> OffsetAndEpoch | None:
        """The snapshot a read from ``offset`` (below the high watermark) begins with, else None."""
        with self._cond:
            item = self._item_at(offset)
            if isinstance(item, _Snapshot) and offset < item.end:
                return item.snapshot_id
            return None

    def _item_at(self, offset: int) -> _Item | None:
        index = bisect.bisect_right(self._ends, offset)
        return self._items[index] if index < len(self._items) else None

    def read(self, start: int, end: int, *, include_snapshots: bool = True) -> list[Chunk]:
        """The kept chunks of ``[start, end)`` (``end`` at most the high watermark), in offset order.

        Raises:
            OffsetReleasedError: ``start`` is below what is kept.
            OffsetCompactedError: ``include_snapshots`` is false and the range begins in a snapshot.
        """
        with self._cond:
            if start < self._floor:
                raise OffsetReleasedError(
                    f"offset {start} is below what this tail keeps (from {self._floor})"
                )
            if end > self._next:
                raise QuorumReadError(f"offset {end} is above the high watermark {self._next}")
            chunks: list[Chunk] = []
            batches: list[bytes] = []
            pos = start
            index = bisect.bisect_right(self._ends, start)
            while pos < end and index < len(self._items):
                item = self._items[index]
                index += 1
                if isinstance(item, _Batch):
                    batches.append(item.raw)
                    pos = item.end
                    continue
                chunks += _log_chunks(batches, start, end)
                batches = []
                if not include_snapshots:
                    raise OffsetCompactedError(
                        f"offset {pos} is no longer in the leader's log (it resumes at {item.end}): its "
                        f"records are only in snapshot {item.snapshot_id.offset}-{item.snapshot_id.epoch}",
                        pos,
                        item.snapshot_id,
                        item.end,
                    )
                if item.end > end:
                    break  # [pos, end) lives only in a snapshot whose rows belong after ``end``
                chunks += _snapshot_chunks(item.snapshot_id, item.raw)
                pos = start = item.end
            chunks += _log_chunks(batches, start, end)
            return chunks


def _log_chunks(batches: list[bytes], start: int, end: int) -> list[Chunk]:
    """Whole batches joined into chunks of about ``CHUNK_BYTES``, each standing for ``[start, end)``."""
    chunks: list[Chunk] = []
    group: list[bytes] = []
    size = 0
    for raw in batches:
        if group and size + len(raw) > CHUNK_BYTES:
            chunks.append(LogChunk(b"".join(group), start, end))
            group, size = [], 0
        group.append(raw)
        size += len(raw)
    if group:
        chunks.append(LogChunk(b"".join(group), start, end))
    return chunks


def _snapshot_chunks(sid: OffsetAndEpoch, raw: bytes) -> list[Chunk]:
    """A snapshot's bytes cut between batches into chunks of about ``CHUNK_BYTES``."""
    chunks: list[Chunk] = []
    begin = cut = 0
    for pos, header in iter_batch_headers(raw):
        if pos > begin and pos + header.size_in_bytes - begin > CHUNK_BYTES:
            chunks.append(SnapshotChunk(sid, raw[begin:pos], begin, len(raw)))
            begin = pos
        cut = pos + header.size_in_bytes
    if cut != len(raw):
        raise QuorumReadError(f"snapshot {sid} ends inside a batch at byte {cut} of {len(raw)}")
    if cut > begin:
        chunks.append(SnapshotChunk(sid, raw[begin:cut], begin, len(raw)))
    return chunks


class QuorumTail:
    """Tails the committed log of the quorum reachable through ``bootstrap`` (see the module doc).

    Args:
        bootstrap: ``host:port,...`` of any controllers (or a list of ``Address``).
        cluster_id: the quorum's cluster id (None: asked of the controllers, DescribeCluster).
        node_id: the observer's replica id (None: -1, a reader the leader does not track).
        from_offset: keep nothing below this offset (the consumer starts there).
        timeout_s: how long ``start`` and the waits go without progress before they fail.
        request_timeout_ms, fetch_max_wait_ms, max_fetch_bytes: the core's (``QuorumConfig``).
        max_buffered_bytes: above this much unreleased data the tail stops fetching.
        poll_interval_ms: without a node id, the pause after a Fetch that brought nothing new.

    Use as a context manager (``start`` on entry, ``close`` on exit); thread-safe.
    """

    def __init__(
        self,
        bootstrap: str | Sequence[Address],
        *,
        cluster_id: str | None = None,
        node_id: int | None = None,
        from_offset: int = 0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        request_timeout_ms: int = 2_000,
        fetch_max_wait_ms: int = 500,
        max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
    ) -> None:
        self._bootstrap = parse_bootstrap(bootstrap) if isinstance(bootstrap, str) else list(bootstrap)
        if not self._bootstrap:
            raise QuorumReadError("no bootstrap address given")
        if timeout_s <= 0 or max_fetch_bytes <= 0 or max_buffered_bytes <= 0:
            raise ValueError("timeout_s, max_fetch_bytes and max_buffered_bytes must be positive")
        self._cluster_id = cluster_id
        self._node_id = node_id
        self._timeout_s = timeout_s
        self._request_timeout_ms = request_timeout_ms
        self._config = QuorumConfig(
            voters={},
            bootstrap_servers=tuple(Endpoint(LISTENER_NAME, a.host, a.port) for a in self._bootstrap),
            request_timeout_ms=request_timeout_ms,
            fetch_max_wait_ms=fetch_max_wait_ms,
            max_fetch_bytes=max_fetch_bytes,
            fetch_snapshot_max_bytes=max_fetch_bytes,
        )
        self._poll_interval_s = poll_interval_ms / 1000 if node_id is None else 0.0
        self._log = MemoryLog()
        self.buffer = TailBuffer(self._log, from_offset=from_offset, max_buffered_bytes=max_buffered_bytes)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._driver: LoopDriver | None = None
        self._channel: PeerChannel | None = None
        self._leader_hw = -1  # the highest high watermark a leader reported
        self._leader_answered = threading.Event()
        # A Fetch held back (memory bound, or the pause after an idle answer), and until when.
        self._held: Envelope | None = None
        self._held_until = 0.0
        self._held_timer: asyncio.TimerHandle | None = None
        self._trimming = False
        self._closed = False

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    def __enter__(self) -> QuorumTail:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> QuorumTail:
        """Learns the cluster id (if not given) and starts the observer on its own thread.

        Raises:
            QuorumReadError: no controller answered within ``timeout_s``.
        """
        if self._thread is not None:
            return self
        if self._cluster_id is None:
            client = AdminClient(
                self._bootstrap,
                timeout_ms=int(self._timeout_s * 1000),
                request_timeout_ms=self._request_timeout_ms,
                retry_backoff_ms=20,
                retry_backoff_max_ms=500,
            )
            try:
                self._cluster_id = client.cluster_id()
            except AdminError as e:
                raise QuorumReadError(f"no leader of the quorum found: {e}") from None
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="kraft-quorum-tail", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start_on_loop(), loop).result()
        return self

    async def _start_on_loop(self) -> None:
        assert self._cluster_id is not None and self._loop is not None
        clock = WallClock()
        # Built as a broker's metadata replica is: a node of one part, its raft observer.
        node = build_node(
            NodeConfig(
                node_id=self._node_id,
                cluster_id=self._cluster_id,
                directory_id=ZERO_UUID if self._node_id is None else uuid.uuid4(),
                quorum=self._config,
            ),
            NodeStorage(self._log, MemoryElectionStore()),
            clock(),
            random.Random(),
        )
        node.raft.register(self.buffer)
        self._driver = LoopDriver(node, clock=clock, log_prefix="[quorum tail] ")
        self._channel = PeerChannel(
            local_id=-1 if self._node_id is None else self._node_id,
            addresses={-2 - n: PeerAddress(a.host, a.port) for n, a in enumerate(self._bootstrap)},
            apis=REGISTRY,
            deliver=self._on_response,
            listener_name=LISTENER_NAME,
            cluster_id=self._cluster_id,
            request_timeout_ms=self._request_timeout_ms,
            log_prefix="[quorum tail] ",
        )
        self._driver.start(
            self._loop, on_outbound=self._on_outbound, on_fatal=self._on_fatal, on_view=self._on_view
        )

    def close(self) -> None:
        """Stops the observer and its thread (what was read stays readable)."""
        loop, thread = self._loop, self._thread
        if self._closed or loop is None or thread is None:
            self._closed = True
            return
        self._closed = True

        async def stop() -> None:
            if self._held_timer is not None:
                self._held_timer.cancel()
            if self._driver is not None:
                self._driver.stop_now()
            if self._channel is not None:
                await self._channel.close()
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()
        self.buffer.fail(QuorumReadError("the quorum tail was closed"))

    # ------------------------------------------------------------------------------------------
    # What the consumer sees (any thread)

    @property
    def high_watermark(self) -> int:
        """Everything below this offset is committed and was delivered (0 before anything)."""
        return self.buffer.high_watermark

    @property
    def leader_high_watermark(self) -> int:
        """The highest high watermark a leader reported (-1 before any)."""
        return self._leader_hw

    @property
    def leader(self) -> LeaderAndEpoch:
        """The leader and epoch the observer follows."""
        driver = self._driver
        return LeaderAndEpoch(None, 0) if driver is None else driver.view.leader_and_epoch

    @property
    def snapshots_loaded(self) -> int:
        return self.buffer.snapshots_loaded

    def wait_for_leader(self) -> int:
        """Waits for the first answer of a leader that knows its high watermark; returns the
        highest high watermark a leader reported (>= 0).

        Raises:
            QuorumReadError: no leader answered within ``timeout_s``.
        """
        self._check_started()
        if not self._leader_answered.wait(self._timeout_s):
            failure = self.buffer.failure
            if failure is not None:
                raise QuorumReadError(f"the quorum tail stopped: {failure}")
            raise QuorumReadError(
                f"no leader of the quorum found within {self._timeout_s:g} s "
                f"(bootstrap {','.join(str(a) for a in self._bootstrap)})"
            )
        return self._leader_hw

    def wait_for(self, offset: int) -> int:
        """Waits until everything below ``offset`` is committed and delivered (no progress for
        ``timeout_s`` fails); returns the high watermark."""
        self._check_started()
        return self.buffer.wait_for(offset, self._timeout_s, on_want=self._wake_fetch)

    def read(self, start: int, end: int | None = None, *, include_snapshots: bool = True) -> list[Chunk]:
        """The committed log from ``start`` up to ``end`` (default: the high watermark), as chunks
        in offset order (see the module docstring); waits for ``end`` to be committed.

        Raises:
            OffsetReleasedError: ``start`` is below what this tail keeps.
            OffsetCompactedError: ``include_snapshots`` is false and the range begins in a snapshot.
            QuorumReadError: ``end`` not committed in time, or the tail stopped.
        """
        if start < 0:
            raise ValueError(f"start must be >= 0, got {start}")
        if end is None:
            end = self.high_watermark
        else:
            self.wait_for(end)
        return self.buffer.read(start, end, include_snapshots=include_snapshots)

    def snapshot_at(self, offset: int) -> OffsetAndEpoch | None:
        """The snapshot a read from ``offset`` begins with (None: the log holds ``offset``); waits
        until the tail is past ``offset``."""
        self.wait_for(offset + 1)
        return self.buffer.snapshot_at(offset)

    def release(self, below: int) -> None:
        """The consumer will not read below ``below`` again: its memory can go."""
        self.buffer.release(below)
        self._wake_fetch()

    def _check_started(self) -> None:
        if self._thread is None:
            raise QuorumReadError("the quorum tail is not started")

    # ------------------------------------------------------------------------------------------
    # The shell (the tail's loop thread)

    def _on_view(self, _old: NodeView, new: NodeView) -> None:
        """After every poll: address the leader the core follows, and trim the log when due."""
        channel = self._channel
        leader = new.leader_and_epoch.leader_id
        if channel is not None and leader is not None and new.leader_endpoints:
            endpoint = new.leader_endpoints[0]
            channel.set_address(leader, PeerAddress(endpoint.host, endpoint.port))
        buffer = self.buffer
        if buffer.delivered_since_trim >= TRIM_BYTES and not self._trimming and self._driver is not None:
            self._trimming = True
            self._driver.submit(self._trim).add_done_callback(_log_trim_failure)

    def _trim(self, node: Node, now_ms: int) -> None:
        """A local snapshot at the end of the last delivered batch; the core then deletes the log
        before it. It holds no records: nobody loads or fetches it (see the module docstring)."""
        self._trimming = False
        point = self.buffer.trim_point
        self.buffer.delivered_since_trim = 0
        if point is None or point.offset <= self._log.start_offset():
            return
        writer = node.raft.create_snapshot(point, now_ms)
        if writer is not None:
            writer.freeze()

    def _on_response(self, envelope: Envelope) -> None:
        body = envelope.body
        if (
            isinstance(body, FetchResponse)
            and body.error_code == ErrorCode.NONE
            and body.partition_error_code == ErrorCode.NONE
        ):
            news = bool(body.records) or body.snapshot_id is not None or body.diverging_epoch is not None
            if body.high_watermark > self._leader_hw:
                self._leader_hw = body.high_watermark
                news = True
                # A new leader answers -1 until a majority has fetched from it: not an answer yet.
                self._leader_answered.set()
            if not news and self._poll_interval_s > 0:
                self._held_until = time.monotonic() + self._poll_interval_s
        assert self._driver is not None
        self._driver.deliver([envelope])

    def _on_outbound(self, envelopes: list[NodeEnvelope]) -> None:
        channel = self._channel
        if channel is None or self._closed:
            return
        for envelope in envelopes:
            if type(envelope) is not Envelope:
                continue  # (a raft-only node sends nothing else)
            if envelope.is_request and isinstance(envelope.body, (FetchRequest, FetchSnapshotRequest)):
                self._held = envelope  # any earlier one held is superseded: the core gave up on it
                self._send_held()
            elif envelope.is_request:
                channel.send(envelope)

    def _send_held(self) -> None:
        """Sends the held Fetch unless the memory bound or the idle pause says wait."""
        envelope, channel, loop = self._held, self._channel, self._loop
        if envelope is None or channel is None or loop is None or self._closed:
            return
        if self._held_timer is not None:
            self._held_timer.cancel()
            self._held_timer = None
        if self.buffer.paused:
            return  # ``release`` or a waiter calls _wake_fetch
        delay = self._held_until - time.monotonic()
        if delay > 0 and isinstance(envelope.body, FetchRequest):
            self._held_timer = loop.call_later(delay, self._send_held)
            return
        self._held = None
        channel.send(envelope)

    def _wake_fetch(self) -> None:
        loop = self._loop
        if loop is not None and not self._closed:
            with contextlib.suppress(RuntimeError):  # closed meanwhile
                loop.call_soon_threadsafe(self._send_held)

    def _on_fatal(self, error: BaseException) -> None:
        log.error("the quorum tail's observer stopped: %s: %s", type(error).__name__, error)
        self.buffer.fail(error)


def _log_trim_failure(future: Any) -> None:
    error = None if future.cancelled() else future.exception()
    if error is not None:
        # The log keeps what it holds (memory grows by what is fetched until the next trim works).
        log.warning("the quorum tail could not trim its log: %s: %s", type(error).__name__, error)


__all__ = [
    "Chunk",
    "LogChunk",
    "OffsetCompactedError",
    "OffsetReleasedError",
    "QuorumReadError",
    "QuorumTail",
    "SnapshotChunk",
    "TailBuffer",
]
