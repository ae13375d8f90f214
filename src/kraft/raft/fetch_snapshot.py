"""FetchSnapshot (API 59): chunked snapshot download from the leader (spec 3.8)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kraft.common.errors import FatalError
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import FetchSnapshotRequest, FetchSnapshotResponse
from kraft.raft.states import FollowerState, LeaderState
from kraft.raft.types import OffsetAndEpoch, ReplicaKey

if TYPE_CHECKING:
    from kraft.raft.node import RaftNode

BOOTSTRAP_SNAPSHOT_ID = OffsetAndEpoch(0, 0)


def build_fetch_snapshot_request(node: RaftNode, state: FollowerState) -> FetchSnapshotRequest:
    assert state.download is not None
    return FetchSnapshotRequest(
        cluster_id=node.cluster_id,
        replica_key=ReplicaKey(node.source_id, node.directory_id),
        current_leader_epoch=state.epoch,
        snapshot_id=state.download.snapshot_id,
        position=state.download.writer.size_in_bytes(),
        max_bytes=node.config.fetch_snapshot_max_bytes,
    )


def handle_fetch_snapshot_request(
    node: RaftNode, request: FetchSnapshotRequest, now_ms: int
) -> FetchSnapshotResponse:
    if not node.valid_cluster_id(request.cluster_id):
        return FetchSnapshotResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)

    def respond(error: int, **fields: object) -> FetchSnapshotResponse:
        leader_id, epoch, endpoints = node.current_leader_fields()
        return FetchSnapshotResponse(
            partition_error_code=error,
            current_leader_id=leader_id,
            current_leader_epoch=epoch,
            leader_endpoints=endpoints,
            **fields,  # type: ignore[arg-type]
        )

    error = node.validate_leader_only(request.current_leader_epoch)
    if error is not None:
        return respond(error)
    state = node.quorum.state
    assert isinstance(state, LeaderState)
    if node.voter_set.is_voter(request.replica_key):
        node.record_voter_contact(state, request.replica_key.id, now_ms)
    sid = request.snapshot_id
    reader = None if sid == BOOTSTRAP_SNAPSHOT_ID else node.log.read_snapshot(sid)
    if reader is None:
        return respond(ErrorCode.SNAPSHOT_NOT_FOUND, snapshot_id=sid)
    size = reader.size_in_bytes()
    if request.position < 0 or request.position >= size:
        return respond(ErrorCode.POSITION_OUT_OF_RANGE, snapshot_id=sid)
    max_bytes = max(1, min(request.max_bytes, node.config.fetch_snapshot_max_bytes))
    return respond(
        ErrorCode.NONE,
        snapshot_id=sid,
        size=size,
        position=request.position,
        unaligned_records=reader.read(request.position, max_bytes),
    )


def handle_fetch_snapshot_response(
    node: RaftNode, source: int, response: FetchSnapshotResponse, now_ms: int
) -> bool:
    """The API-specific part, once ``RaftNode.preprocess_response`` (spec 3.3) let it through."""
    state = node.quorum.state
    if not isinstance(state, FollowerState) or state.download is None:
        return True
    download = state.download
    sid = response.snapshot_id
    if response.partition_error_code == ErrorCode.SNAPSHOT_NOT_FOUND or sid.offset < 0 or sid.epoch < 0:
        # The leader no longer has it: give up this download and go back to Fetch, there. This is
        # the leader answering (Kafka resets the fetch timer too): an answer through a bootstrap
        # address keeps that address, or the next Fetch would go to another bootstrap server.
        download.writer.abort()
        state.download = None
        state.on_fetched_from_leader(now_ms + node.config.fetch_timeout_ms, source)
        return True
    if response.partition_error_code != ErrorCode.NONE:
        return False
    if sid != download.snapshot_id:
        raise FatalError(f"received chunk of snapshot {sid} while downloading {download.snapshot_id}")
    written = download.writer.size_in_bytes()
    if response.position != written:
        raise FatalError(f"snapshot chunk at position {response.position}, but {written} bytes are written")
    download.writer.append(response.unaligned_records)
    written = download.writer.size_in_bytes()
    if written > response.size:
        raise FatalError(f"snapshot {sid} grew to {written} bytes, past its size {response.size}")
    if written == response.size:
        download.writer.freeze()
        state.download = None
        node.log.truncate_to_latest_snapshot()
        node.on_snapshot_installed(sid, now_ms)
        node.update_follower_high_watermark(sid.offset, now_ms)
    state.on_fetched_from_leader(now_ms + node.config.fetch_timeout_ms, source)
    return True
