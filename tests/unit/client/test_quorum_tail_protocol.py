"""``QuorumTail`` (a real ``RaftNode`` observer over a real ``PeerChannel``) against a fake quorum
of three listeners on loopback that answer on the wire codec like a leader does (Fetch validated
by ``MemoryLog``'s divergence check, FetchSnapshot by position): it delivers exactly the committed
log, never above the high watermark; it downloads a snapshot (in chunks) where the leader serves
one, at offset 0 and behind the log start; a read whose range lies inside a later snapshot yields
nothing, or ``OffsetCompactedError`` without snapshots; a leader change mid-stream carries on with
the new leader; a snapshot cleaned during its download gives way to the newer one; an idle tail
paces its fetches; memory stays bounded by what the consumer has not released."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kraft.cli.cluster_processes import free_ports
from kraft.client import quorum_tail
from kraft.client.connection import Address
from kraft.client.quorum_tail import (
    Chunk,
    LogChunk,
    OffsetCompactedError,
    OffsetReleasedError,
    QuorumReadError,
    QuorumTail,
    SnapshotChunk,
)
from kraft.net.codecs import CODECS
from kraft.net.server import InboundRequest, KafkaServer
from kraft.node.listeners import CONTROLLER_LISTENER_APIS
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.log import MemoryLog, ValidationKind
from kraft.raft.messages import FetchRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse
from kraft.raft.types import Endpoint, OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch, iter_batches

pytestmark = pytest.mark.timeout(60)

BOOTSTRAP_SNAPSHOT = OffsetAndEpoch(0, 0)
CLUSTER_ID = "tail-test-cluster"


def batch(values: list[bytes]) -> bytes:
    return build_batch([SimpleRecord(value=v) for v in values])


@dataclass
class FakeQuorum:
    """Nodes 1..3 sharing one committed log; ``leader`` answers, the others say
    NOT_LEADER_OR_FOLLOWER and name it. Answers and the test's changes take ``lock`` in turn."""

    ports: dict[int, int] = field(default_factory=dict)
    log: MemoryLog = field(default_factory=MemoryLog)
    leader: int = 1
    epoch: int = 1
    high_watermark: int = 0
    fetches: list[tuple[int, FetchRequest]] = field(default_factory=list)
    snapshot_fetches: list[tuple[int, FetchSnapshotRequest]] = field(default_factory=list)
    on_fetch: Any = None  # called with (node, request) before answering
    on_fetch_snapshot: Any = None
    lock: threading.RLock = field(default_factory=threading.RLock)

    def append(self, epoch: int, *batches: list[bytes], commit: bool = True) -> None:
        with self.lock:
            for values in batches:
                self.log.append_as_leader(batch(values), epoch)
            self.log.flush()
            if commit:
                self.high_watermark = self.log.end_offset()

    def snapshot(self, end: int, epoch: int, batches: int = 3, clean: bool = True) -> OffsetAndEpoch:
        with self.lock:
            sid = OffsetAndEpoch(end, epoch)
            writer = self.log.create_new_snapshot(sid)
            assert writer is not None
            for i in range(batches):
                writer.append(batch([f"snap{end}-{i}-{j}".encode() for j in range(4)]))
            writer.freeze()
            if clean:
                assert self.log.delete_before_snapshot(sid)
            return sid

    def endpoint(self, node: int) -> Endpoint:
        return Endpoint("CONTROLLER", "127.0.0.1", self.ports[node])

    def address(self, node: int) -> Address:
        return Address("127.0.0.1", self.ports[node])

    def fetched_from(self) -> list[int]:
        with self.lock:
            return [node for node, _ in self.fetches]

    # -- answers (the servers' loop) -------------------------------------------------------------

    def fetch(self, node: int, request: FetchRequest) -> FetchResponse:
        with self.lock:
            self.fetches.append((node, request))
            if self.on_fetch is not None:
                self.on_fetch(node, request)
            fields: dict[str, Any] = {
                "current_leader_id": self.leader,
                "current_leader_epoch": self.epoch,
                "leader_endpoints": (self.endpoint(self.leader),),
            }
            if node != self.leader:
                return FetchResponse(partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, **fields)
            if request.current_leader_epoch > self.epoch:
                return FetchResponse(partition_error_code=ErrorCode.UNKNOWN_LEADER_EPOCH, **fields)
            if request.current_leader_epoch < self.epoch:
                # A leader answers a fetcher of an older epoch (an observer that has yet to learn
                # the leader) with FENCED_LEADER_EPOCH and itself as the leader.
                return FetchResponse(partition_error_code=ErrorCode.FENCED_LEADER_EPOCH, **fields)
            fields.update(high_watermark=self.high_watermark, log_start_offset=self.log.start_offset())
            latest = self.log.latest_snapshot_id()
            if request.fetch_offset == 0 and latest is not None and latest != BOOTSTRAP_SNAPSHOT:
                return FetchResponse(snapshot_id=latest, **fields)
            valid = self.log.validate_offset_and_epoch(request.fetch_offset, request.last_fetched_epoch)
            if valid.kind is ValidationKind.SNAPSHOT:
                return FetchResponse(snapshot_id=valid.offset_and_epoch, **fields)
            if valid.kind is ValidationKind.DIVERGING:
                return FetchResponse(diverging_epoch=valid.offset_and_epoch, **fields)
            records = b""
            if request.fetch_offset < self.log.end_offset():
                records = self.log.read(request.fetch_offset, max(request.max_bytes, 1))
            return FetchResponse(records=records, **fields)

    def fetch_snapshot(self, node: int, request: FetchSnapshotRequest) -> FetchSnapshotResponse:
        with self.lock:
            self.snapshot_fetches.append((node, request))
            if self.on_fetch_snapshot is not None:
                self.on_fetch_snapshot(node, request)
            fields: dict[str, Any] = {"current_leader_id": self.leader, "current_leader_epoch": self.epoch}
            if node != self.leader:
                return FetchSnapshotResponse(partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, **fields)
            reader = self.log.read_snapshot(request.snapshot_id)
            if reader is None:
                return FetchSnapshotResponse(
                    partition_error_code=ErrorCode.SNAPSHOT_NOT_FOUND,
                    snapshot_id=request.snapshot_id,
                    **fields,
                )
            return FetchSnapshotResponse(
                snapshot_id=request.snapshot_id,
                size=reader.size_in_bytes(),
                position=request.position,
                unaligned_records=reader.read(request.position, request.max_bytes),
                **fields,
            )


class _Node:
    """One fake node's request handler: the raft requests go to the fake quorum's answers."""

    def __init__(self, quorum: FakeQuorum, node: int) -> None:
        self.quorum = quorum
        self.node = node

    async def handle(self, request: InboundRequest) -> Any:
        codec = CODECS[request.api.key]
        decoded = codec.decode_request(request.body, request.version, None)
        if isinstance(decoded, FetchRequest):
            response: Any = self.quorum.fetch(self.node, decoded)
        elif isinstance(decoded, FetchSnapshotRequest):
            response = self.quorum.fetch_snapshot(self.node, decoded)
        else:
            raise AssertionError(f"unexpected {decoded}")
        return codec.encode_response(response, request.version, "CONTROLLER")


@pytest.fixture
def quorum() -> Iterator[FakeQuorum]:
    q = FakeQuorum()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers: list[KafkaServer] = []

    async def start() -> None:
        for node in (1, 2, 3):
            server = KafkaServer(
                apis=dict(CONTROLLER_LISTENER_APIS), handler=_Node(q, node), max_request_bytes=1 << 20
            )
            q.ports[node] = await server.listen("CONTROLLER", "127.0.0.1", 0)
            servers.append(server)

    async def stop() -> None:
        for server in servers:
            await server.close()

    asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    yield q
    asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def tail(q: FakeQuorum, **kw: Any) -> QuorumTail:
    """A tail whose only bootstrap server is node 2 (not the leader)."""
    kw.setdefault("timeout_s", 5.0)
    return QuorumTail([q.address(2)], cluster_id=CLUSTER_ID, **kw)


def rows(chunks: list[Chunk]) -> list[tuple[str, int, bytes | None]]:
    """("log" | "snap@END", offset, value) of every record the chunks stand for."""
    out: list[tuple[str, int, bytes | None]] = []
    for chunk in chunks:
        if isinstance(chunk, LogChunk):
            out += [("log", r.offset, r.value) for _, r in chunk.iter_records()]
        else:
            assert isinstance(chunk, SnapshotChunk)
            out += [
                (f"snap@{chunk.snapshot_id.offset}", chunk.offset, r.value)
                for b in iter_batches(chunk.records)
                for r in b.records
            ]
    return out


def fill(q: FakeQuorum, epochs: list[int], per_batch: int = 3) -> None:
    """Batches of ``per_batch`` records in these epochs; the leader's epoch is the last one."""
    for epoch in epochs:
        with q.lock:
            n = q.log.end_offset()
            q.append(epoch, [f"v{n + i}".encode() for i in range(per_batch)])
            q.epoch = max(q.epoch, epoch)


def eventually(what: str, condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


# ------------------------------------------------------------------------------------------------


def test_delivers_exactly_the_committed_log_from_the_leader_a_bootstrap_server_names(
    quorum: FakeQuorum,
) -> None:
    fill(quorum, [1, 1, 1, 1])  # offsets 0..11, three per batch
    with tail(quorum, max_fetch_bytes=1) as t:  # one batch per Fetch
        assert t.wait_for_leader() == 12
        got = rows(t.read(1, 8))
        assert t.leader.leader_id == 1
        # The read returns once offset 7 is in; the fetch from 9 may not have been sent yet.
        assert t.wait_for(12) == 12
    assert [o for _, o, _ in got] == list(range(1, 8))
    assert {k for k, _, _ in got} == {"log"}
    # The bootstrap address (node 2) is not the leader: it named node 1, the tail fetched there.
    fetched = quorum.fetched_from()
    assert fetched[0] == 2 and set(fetched[1:]) == {1}
    # An observer without a node id, fetching from its log end with the epoch of its last batch.
    assert all(f.replica_key.id == -1 for _, f in quorum.fetches)
    to_leader = [(f.fetch_offset, f.last_fetched_epoch) for n, f in quorum.fetches if n == 1]
    assert to_leader[:4] == [(0, 0), (3, 1), (6, 1), (9, 1)] and set(to_leader[4:]) <= {(12, 1)}


def test_never_above_the_high_watermark(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1])
    quorum.high_watermark = 4  # offsets 4, 5 are uncommitted
    with tail(quorum, timeout_s=0.5) as t:
        # The listener gets whole committed batches: the batch 3-5 is not committed yet.
        assert t.wait_for(3) == 3
        time.sleep(0.3)  # more fetches, the same high watermark
        assert t.high_watermark == 3 and t.leader_high_watermark == 4
        assert [o for _, o, _ in rows(t.read(0))] == [0, 1, 2]
        with pytest.raises(QuorumReadError, match="offset 4 to be committed"):
            t.read(0, 4)
        with pytest.raises(QuorumReadError, match="offset 6 to be committed"):
            t.read(0, 6)
        with quorum.lock:
            quorum.high_watermark = 6
        assert [o for _, o, _ in rows(t.read(2, 6))] == [2, 3, 4, 5]


def test_a_snapshot_at_offset_zero_is_downloaded_in_chunks_then_the_log(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 2, 2])  # 0..11
    sid = quorum.snapshot(6, 1)
    with tail(quorum, max_fetch_bytes=40) as t:  # FetchSnapshot by chunks of 40 bytes
        chunks = t.read(2, t.wait_for(12))
        assert t.snapshots_loaded == 1
    positions = [r.position for _, r in quorum.snapshot_fetches]
    assert len(positions) > 3 and positions == sorted(positions) and positions[0] == 0
    snaps = [c for c in chunks if isinstance(c, SnapshotChunk)]
    assert [c.snapshot_id for c in snaps] == [sid] and snaps[-1].last
    got = rows(chunks)
    assert [(k, o) for k, o, _ in got[:12]] == [("snap@6", 5)] * 12
    assert [o for k, o, _ in got[12:]] == list(range(6, 12))
    assert {k for k, _, _ in got[12:]} == {"log"}
    snapshot = quorum.log.read_snapshot(sid)
    assert snapshot is not None
    assert b"".join(c.records for c in snaps) == snapshot.read(0, 1 << 20)


def test_a_range_wholly_inside_a_later_snapshot_yields_nothing(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 2, 2])
    sid = quorum.snapshot(9, 2)
    with tail(quorum) as t:
        t.wait_for(12)
        assert t.read(2, 8) == []  # the snapshot's rows (offset 8) belong to a range holding 8
        assert rows(t.read(2, 9))[0][:2] == ("snap@9", 8)
        assert t.snapshot_at(2) == sid
        assert t.snapshot_at(9) is None
        with pytest.raises(OffsetCompactedError) as e:
            t.read(2, 12, include_snapshots=False)
    assert (e.value.offset, e.value.snapshot_id, e.value.log_start_offset) == (2, sid, 9)


def test_offset_zero_gets_the_latest_snapshot_while_the_log_still_starts_at_zero(
    quorum: FakeQuorum,
) -> None:
    fill(quorum, [1, 1, 1])
    sid = quorum.snapshot(6, 1, clean=False)
    assert quorum.log.start_offset() == 0
    with tail(quorum) as t:
        t.wait_for(9)
        # An empty observer fetches at 0: the leader answers with its latest snapshot (Kafka's
        # rule), so the tail never holds the log below it.
        assert t.snapshot_at(0) == sid
        assert t.snapshot_at(3) == sid
        got = rows(t.read(0, 9))
    assert [o for k, o, _ in got if k == "log"] == [6, 7, 8]
    assert {o for k, o, _ in got if k != "log"} == {5}


def test_a_leader_change_mid_stream_carries_on_with_the_new_leader(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 1, 1])

    def depose(node: int, request: FetchRequest) -> None:
        if request.fetch_offset >= 6 and quorum.leader == 1:
            quorum.leader, quorum.epoch = 3, 2
            quorum.log.initialize_leader_epoch(2)
            fill(quorum, [2])

    quorum.on_fetch = depose
    with tail(quorum, max_fetch_bytes=1) as t:
        chunks = t.read(0, t.wait_for(15))
        assert t.leader.leader_id == 3 and t.leader.epoch == 2
    assert [o for _, o, _ in rows(chunks)] == list(range(15))
    # Offset 6 was asked of node 1, which named node 3; node 3 served it and everything after.
    at_six = [n for n, f in quorum.fetches if f.fetch_offset == 6]
    assert at_six[:2] == [1, 3] and set(at_six[1:]) == {3}
    assert {n for n, f in quorum.fetches if f.fetch_offset > 6} == {3}


def test_a_fresh_leader_without_an_entry_of_its_epoch_serves_the_log(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 2])
    quorum.leader, quorum.epoch = 2, 5  # elected, nothing appended in epoch 5 yet
    with tail(quorum) as t:
        assert [o for _, o, _ in rows(t.read(3, t.wait_for(9)))] == list(range(3, 9))
        assert t.leader.epoch == 5


def test_a_snapshot_cleaned_during_its_download_gives_way_to_the_newer_one(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 1, 1])
    quorum.snapshot(3, 1)

    def newer(node: int, request: FetchSnapshotRequest) -> None:
        if request.snapshot_id.offset == 3 and request.position > 0:
            quorum.snapshot(9, 1)  # cleans 3-1

    quorum.on_fetch_snapshot = newer
    with tail(quorum, max_fetch_bytes=40) as t:
        got = rows(t.read(0, t.wait_for(12)))
    # Nothing of the vanished snapshot was delivered: only the whole newer one, then the log.
    assert {k for k, _, _ in got} == {"snap@9", "log"}
    assert [o for k, o, _ in got if k == "log"] == [9, 10, 11]


def test_an_idle_tail_paces_its_fetches(quorum: FakeQuorum) -> None:
    fill(quorum, [1])
    with tail(quorum, poll_interval_ms=100) as t:
        t.wait_for(3)
        before = len(quorum.fetches)
        time.sleep(1.0)
        idle = len(quorum.fetches) - before
        # The leader answers a reader without a node id at once: unpaced, that is a Fetch per round
        # trip (thousands a second); paced, about one per poll interval.
        assert 3 <= idle <= 15, idle
        fill(quorum, [1])
        t.wait_for(6)  # a new commit still arrives within a poll interval or so


def test_memory_stays_bounded_by_what_the_consumer_has_not_released(
    quorum: FakeQuorum, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(quorum_tail, "TRIM_BYTES", 200)
    for _ in range(40):
        fill(quorum, [1], per_batch=5)  # 40 batches of about 110 bytes each, offsets 0..199
    with tail(quorum, max_fetch_bytes=1, max_buffered_bytes=1000) as t:
        # It stops once it holds more than 1000 bytes the consumer has not released...
        eventually("the tail to stop fetching", lambda: t.buffer.paused)
        stalled = t.high_watermark
        time.sleep(0.3)
        assert t.high_watermark == stalled < 200
        assert 1000 < t.buffer.buffered_bytes < 1200
        # ... and its raft log was trimmed below what it delivered (local snapshots).
        assert 0 < quorum_tail_log(t).start_offset() <= stalled
        # A consumer releasing what it read lets it go on, and so does one waiting for more.
        first = rows(t.read(0, stalled))
        t.release(stalled)
        eventually("the tail to go on", lambda: t.high_watermark > stalled)
        t.wait_for(200)
        assert t.buffer.buffered_bytes > 1000  # the waiter's offsets came in past the bound
        rest = rows(t.read(stalled, 200))
    assert [o for _, o, _ in first + rest] == list(range(200))
    with pytest.raises(OffsetReleasedError):
        t.read(0, 10)


def quorum_tail_log(t: QuorumTail) -> Any:
    return t._log


def test_an_unreachable_quorum_fails_within_the_timeout() -> None:
    (dead,) = free_ports(1)
    t = QuorumTail(f"127.0.0.1:{dead}", timeout_s=0.5, request_timeout_ms=200)
    started = time.monotonic()
    with pytest.raises(QuorumReadError, match="no leader of the quorum found"):
        t.start()
    assert time.monotonic() - started < 5
