"""``QuorumReader`` against a fake quorum that answers on the wire codec like a leader does (Fetch
validated by ``MemoryLog``'s divergence check, FetchSnapshot by position, DescribeQuorum): reads
exactly ``[start, end)``, never above the high watermark; snapshots where the leader serves them
(behind the log start, and at offset 0); the snapshot's epoch at the log start; a leader change
and a fresh leader's divergence answer mid-read; a snapshot cleaned during its download."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kraft.client import admin
from kraft.client.connection import Address
from kraft.net import raft_codec
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.log import MemoryLog, ValidationKind
from kraft.raft.messages import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    ReplicaState,
)
from kraft.raft.types import Endpoint, OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch, iter_batches
from kraft.tools import quorum_reader
from kraft.tools.quorum_reader import (
    LogChunk,
    OffsetCompactedError,
    QuorumReader,
    QuorumReadError,
    SnapshotChunk,
)

BOOTSTRAP_SNAPSHOT = OffsetAndEpoch(0, 0)


def batch(values: list[bytes]) -> bytes:
    return build_batch([SimpleRecord(value=v) for v in values])


@dataclass
class FakeQuorum:
    """Nodes 1..3 on ports 9001..9003 sharing one committed log; ``leader`` answers, the others
    say NOT_LEADER_OR_FOLLOWER and name it (and DescribeQuorum is answered by everyone, as our
    followers forward it)."""

    log: MemoryLog = field(default_factory=MemoryLog)
    leader: int = 1
    epoch: int = 1
    high_watermark: int = 0
    fetches: list[tuple[int, FetchRequest]] = field(default_factory=list)
    on_fetch: Any = None  # called with (node, request) before answering
    on_fetch_snapshot: Any = None

    def append(self, epoch: int, *batches: list[bytes]) -> None:
        for values in batches:
            self.log.append_as_leader(batch(values), epoch)
        self.log.flush()
        self.high_watermark = self.log.end_offset()

    def snapshot(self, end: int, epoch: int, batches: int = 3, clean: bool = True) -> OffsetAndEpoch:
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
        return Endpoint("CONTROLLER", "fake", 9000 + node)

    # -- answers -----------------------------------------------------------------------------

    def fetch(self, node: int, request: FetchRequest) -> FetchResponse:
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
        if request.current_leader_epoch != self.epoch:
            error = (
                ErrorCode.FENCED_LEADER_EPOCH
                if request.current_leader_epoch < self.epoch
                else ErrorCode.UNKNOWN_LEADER_EPOCH
            )
            return FetchResponse(partition_error_code=error, **fields)
        if request.last_fetched_epoch < 0 or request.last_fetched_epoch > request.current_leader_epoch:
            return FetchResponse(partition_error_code=ErrorCode.INVALID_REQUEST, **fields)
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
        if self.on_fetch_snapshot is not None:
            self.on_fetch_snapshot(node, request)
        fields: dict[str, Any] = {"current_leader_id": self.leader, "current_leader_epoch": self.epoch}
        if node != self.leader:
            return FetchSnapshotResponse(partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, **fields)
        reader = self.log.read_snapshot(request.snapshot_id)
        if reader is None:
            return FetchSnapshotResponse(
                partition_error_code=ErrorCode.SNAPSHOT_NOT_FOUND, snapshot_id=request.snapshot_id, **fields
            )
        return FetchSnapshotResponse(
            snapshot_id=request.snapshot_id,
            size=reader.size_in_bytes(),
            position=request.position,
            unaligned_records=reader.read(request.position, request.max_bytes),
            **fields,
        )

    def describe(self) -> DescribeQuorumResponse:
        return DescribeQuorumResponse(
            leader_id=self.leader,
            leader_epoch=self.epoch,
            high_watermark=self.high_watermark,
            current_voters=tuple(ReplicaState(replica_id=i) for i in (1, 2, 3)),
            nodes={i: (self.endpoint(i),) for i in (1, 2, 3)},
        )


class FakeConnection:
    """Stands in for ``kraft.tools.admin.Connection``: routes the request bodies to the fake."""

    quorum: FakeQuorum

    def __init__(self, address: Address, timeout_s: float, client_id: str = "x") -> None:
        self.address = address
        self.node = address.port - 9000
        self.features = None
        self.versions = {api.key: (0, api.versions.high) for api in raft_codec.RAFT_APIS.values()}

    def __enter__(self) -> FakeConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def close(self) -> None:
        pass

    def version_for(self, api: Any, highest: int | None = None) -> int | None:
        top: int = api.versions.high
        return top if highest is None else min(highest, top)

    def version_or_raise(self, api: Any, highest: int | None = None) -> int:
        return self.version_for(api, highest)

    def send(self, api: Any, version: int, body: Any) -> Any:
        request = raft_codec.decode_request(api.key, body)
        if isinstance(request, FetchRequest):
            response: Any = self.quorum.fetch(self.node, request)
        elif isinstance(request, FetchSnapshotRequest):
            response = self.quorum.fetch_snapshot(self.node, request)
        elif isinstance(request, DescribeQuorumRequest):
            response = self.quorum.describe()
        else:
            raise AssertionError(f"unexpected {request}")
        return raft_codec.encode_response(response, version, listener_name="CONTROLLER")


@pytest.fixture
def quorum(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeQuorum]:
    q = FakeQuorum()
    FakeConnection.quorum = q
    monkeypatch.setattr(quorum_reader, "Connection", FakeConnection)
    monkeypatch.setattr(admin, "Connection", FakeConnection)
    yield q


def reader(**kw: Any) -> QuorumReader:
    return QuorumReader("fake:9002", timeout_s=kw.pop("timeout_s", 2.0), **kw)


def rows(chunks: Any) -> list[tuple[str, int, bytes | None]]:
    """("log" | "snap@E", offset, value) of every record the chunks stand for."""
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
        n = q.log.end_offset()
        q.append(epoch, [f"v{n + i}".encode() for i in range(per_batch)])
        q.epoch = max(q.epoch, epoch)


# ------------------------------------------------------------------------------------------------


def test_reads_exactly_start_to_end_across_batches_and_fetches(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 1, 1])  # offsets 0..11, three per batch
    with reader(max_fetch_bytes=1) as r:  # one batch per Fetch
        got = rows(r.read(1, 8))
    assert [o for _, o, _ in got] == list(range(1, 8))
    assert {k for k, _, _ in got} == {"log"}
    # The bootstrap address (node 2) is not the leader: the reader asked, then fetched from node 1.
    assert {node for node, _ in quorum.fetches} == {1}
    assert all(f.replica_key.id == -1 and f.max_wait_ms == 0 for _, f in quorum.fetches)
    # After the first batch, the last fetched epoch is the previous batch's, as a follower's.
    assert [f.fetch_offset for _, f in quorum.fetches] == [1, 3, 6]


def test_never_above_the_high_watermark(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1])
    quorum.high_watermark = 4  # offsets 4, 5 are uncommitted
    with reader(timeout_s=0.3) as r:
        assert [o for _, o, _ in rows(r.read(0))] == [0, 1, 2, 3]
        with pytest.raises(QuorumReadError, match="offset 6 to be committed"):
            list(r.read(0, 6))


def test_an_end_above_the_high_watermark_waits_for_the_commit(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1])
    quorum.high_watermark = 3
    with reader() as r:
        assert r.high_watermark().high_watermark == 3
        calls = []
        original = quorum.describe

        def commit_later() -> DescribeQuorumResponse:
            calls.append(1)
            if len(calls) == 3:
                quorum.high_watermark = 6
            return original()

        quorum.describe = commit_later  # type: ignore[method-assign]
        assert [o for _, o, _ in rows(r.read(2, 6))] == [2, 3, 4, 5]


def test_a_compacted_start_yields_the_snapshot_then_the_log(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 2, 2])  # 0..11
    sid = quorum.snapshot(6, 1)
    positions: list[int] = []
    quorum.on_fetch_snapshot = lambda node, request: positions.append(request.position)
    with reader(max_fetch_bytes=40) as r:  # FetchSnapshot by chunks of 40 bytes
        chunks = list(r.read(2, 12))
    snaps = [c for c in chunks if isinstance(c, SnapshotChunk)]
    assert [c.snapshot_id for c in snaps] == [sid] and snaps[-1].last
    assert len(positions) > 3 and positions == sorted(positions) and positions[0] == 0
    got = rows(chunks)
    assert [(k, o) for k, o, _ in got[:12]] == [("snap@6", 5)] * 12
    assert [o for k, o, _ in got[12:]] == list(range(6, 12))
    assert {k for k, _, _ in got[12:]} == {"log"}
    assert b"".join(c.records for c in snaps) == quorum.log.read_snapshot(sid).read(0, 1 << 20)  # type: ignore[union-attr]


def test_a_range_wholly_inside_a_later_snapshot_yields_nothing(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 2, 2])
    sid = quorum.snapshot(9, 2)
    with reader() as r:
        assert list(r.read(2, 8)) == []  # the snapshot's rows (offset 8) belong to a range holding 8
        assert rows(r.read(2, 9))[0][:2] == ("snap@9", 8)
        assert r.snapshot_at(2) == sid
        assert r.snapshot_at(9) is None
        with pytest.raises(OffsetCompactedError) as e:
            list(r.read(2, 12, include_snapshots=False))
    assert (e.value.offset, e.value.snapshot_id, e.value.log_start_offset) == (2, sid, 9)


def test_at_the_log_start_the_snapshot_epoch_precedes_it(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 3, 3])  # epoch 3 starts at 6
    sid = quorum.snapshot(6, 1)
    with reader() as r:
        got = rows(r.read(6, 12))
        assert r.snapshot_at(6) is None
    # The leader's log starts at 6, where epoch 3 begins: Fetch(6, last epoch 3) is answered with
    # the snapshot 6-1 (6 is not past it), so the reader asks again with its epoch, 1: no snapshot.
    assert [(k, o) for k, o, _ in got] == [("log", o) for o in range(6, 12)]
    assert (6, 3) in [(f.fetch_offset, f.last_fetched_epoch) for _, f in quorum.fetches]
    assert (6, sid.epoch) in [(f.fetch_offset, f.last_fetched_epoch) for _, f in quorum.fetches]


def test_offset_zero_gets_the_latest_snapshot_while_the_log_still_starts_at_zero(
    quorum: FakeQuorum,
) -> None:
    fill(quorum, [1, 1, 1])
    sid = quorum.snapshot(6, 1, clean=False)
    assert quorum.log.start_offset() == 0
    with reader() as r:
        assert r.snapshot_at(0) == sid
        assert r.snapshot_at(3) is None
        got = rows(r.read(0, 9))
        assert [o for k, o, _ in got if k == "log"] == [6, 7, 8]
        assert {o for k, o, _ in got if k != "log"} == {5}
        assert [o for _, o, _ in rows(r.read(1, 9))] == list(range(1, 9))


def test_a_leader_change_mid_read_carries_on_with_the_new_leader(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 1, 1])

    def depose(node: int, request: FetchRequest) -> None:
        if request.fetch_offset >= 6 and quorum.leader == 1:
            quorum.leader, quorum.epoch = 3, 2
            quorum.log.initialize_leader_epoch(2)
            fill(quorum, [2])

    quorum.on_fetch = depose
    with reader(max_fetch_bytes=1) as r:
        chunks = list(r.read(0, 12))
        assert r.leader_id == 3
    assert [o for _, o, _ in rows(chunks)] == list(range(12))
    assert [c.leader_id for c in chunks] == [1, 1, 3, 3]
    assert [n for n, f in quorum.fetches if f.fetch_offset == 6] == [1, 3]


def test_a_fresh_leader_without_an_entry_of_its_epoch_answers_a_divergence(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 2])
    quorum.leader, quorum.epoch = 2, 5  # elected, nothing appended in epoch 5 yet
    with reader() as r:
        assert [o for _, o, _ in rows(r.read(3, 9))] == list(range(3, 9))
    assert [(f.fetch_offset, f.last_fetched_epoch) for _, f in quorum.fetches[:2]] == [(3, 5), (3, 2)]


def test_a_snapshot_cleaned_during_its_download_gives_way_to_the_newer_one(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1, 1, 1])
    quorum.snapshot(3, 1)

    def newer(node: int, request: FetchSnapshotRequest) -> None:
        if request.snapshot_id.offset == 3 and request.position > 0:
            quorum.snapshot(9, 1)  # cleans 3-1

    quorum.on_fetch_snapshot = newer
    with reader(max_fetch_bytes=40) as r:
        got = rows(r.read(0, 12))
    # Nothing of the vanished snapshot was yielded: only the whole newer one, then the log.
    assert {k for k, _, _ in got} == {"snap@9", "log"}
    assert [o for k, o, _ in got if k == "log"] == [9, 10, 11]


def test_a_leader_hint_saves_the_lookup(quorum: FakeQuorum) -> None:
    fill(quorum, [1, 1])
    with reader() as first:
        first.high_watermark()
        hint = first.leader_hint()
    assert hint is not None and (hint.leader_id, hint.leader_epoch, hint.high_watermark) == (1, 1, 6)
    quorum.describe = None  # type: ignore[assignment]  # any DescribeQuorum would now fail
    with QuorumReader("fake:9002", leader_hint=hint) as r:
        assert [o for _, o, _ in rows(r.read(0, 6))] == list(range(6))


def test_an_unreachable_quorum_fails_within_the_timeout() -> None:
    r = QuorumReader("127.0.0.1:1", timeout_s=0.5, request_timeout_s=0.2)
    with pytest.raises(QuorumReadError, match="no leader of the quorum found"):
        r.high_watermark()
