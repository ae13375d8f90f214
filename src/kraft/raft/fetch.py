"""Fetch (API 1) as raft uses it: the leader serves records, followers append, truncate or switch to
a snapshot download (spec 3.7, 4.1, 4.2).

The leader parks a Fetch that finds nothing new (long poll, up to MaxWaitMs); ``RaftNode`` completes
it on append, high-watermark change, expiry, or fails it with NOT_LEADER_OR_FOLLOWER on a role change.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kraft.common.errors import CorruptRecordError, FatalError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.log import ValidationKind
from kraft.raft.messages import Envelope, FetchRequest, FetchResponse
from kraft.raft.states import FollowerState, LeaderState, ReplicaProgress, SnapshotDownload
from kraft.raft.types import OffsetAndEpoch, ReplicaKey
from kraft.records.batch import iter_batch_headers

if TYPE_CHECKING:
    from kraft.raft.node import RaftNode

BOOTSTRAP_SNAPSHOT_ID = OffsetAndEpoch(0, 0)

_log = logging.getLogger(__name__)


def build_fetch_request(node: RaftNode) -> FetchRequest:
    return FetchRequest(
        cluster_id=node.cluster_id,
        replica_key=ReplicaKey(node.source_id, node.directory_id),
        max_wait_ms=node.config.fetch_max_wait_ms,
        fetch_offset=node.log.end_offset(),
        last_fetched_epoch=node.log.last_fetched_epoch(),
        current_leader_epoch=node.epoch,
        max_bytes=node.config.max_fetch_bytes,
    )


def handle_fetch_request(
    node: RaftNode, envelope: Envelope, request: FetchRequest, now_ms: int, *, may_park: bool
) -> FetchResponse | None:
    """The response, or ``None`` when the request was parked (long poll)."""
    if not node.valid_cluster_id(request.cluster_id):
        return FetchResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)

    def respond(
        error: int,
        *,
        records: bytes = b"",
        snapshot_id: OffsetAndEpoch | None = None,
        diverging_epoch: OffsetAndEpoch | None = None,
    ) -> FetchResponse:
        leader_id, epoch, endpoints = node.current_leader_fields()
        hw = node.high_watermark
        return FetchResponse(
            partition_error_code=error,
            high_watermark=-1 if hw is None else hw,
            log_start_offset=node.log.start_offset(),
            current_leader_id=leader_id,
            current_leader_epoch=epoch,
            leader_endpoints=endpoints,
            records=records,  # the defaults of these three are FetchResponse's
            snapshot_id=snapshot_id,
            diverging_epoch=diverging_epoch,
        )

    if (
        request.max_wait_ms < 0
        or request.fetch_offset < 0
        or request.last_fetched_epoch < 0
        or request.last_fetched_epoch > request.current_leader_epoch
    ):
        return respond(ErrorCode.INVALID_REQUEST)
    error = node.validate_leader_only(request.current_leader_epoch)
    if error is not None:
        return respond(error)
    state = node.quorum.state
    assert isinstance(state, LeaderState)
    if node.voter_set.is_voter(request.replica_key):
        node.record_voter_contact(state, request.replica_key.id, now_ms)

    latest = node.log.latest_snapshot_id()
    if request.fetch_offset == 0 and latest is not None and latest != BOOTSTRAP_SNAPSHOT_ID:
        return respond(ErrorCode.NONE, snapshot_id=latest)
    validated = node.log.validate_offset_and_epoch(request.fetch_offset, request.last_fetched_epoch)
    if validated.kind is ValidationKind.SNAPSHOT:
        return respond(ErrorCode.NONE, snapshot_id=validated.offset_and_epoch)
    if validated.kind is ValidationKind.DIVERGING:
        return respond(ErrorCode.NONE, diverging_epoch=validated.offset_and_epoch)

    progress = _update_replica_progress(node, state, request, now_ms)
    records = b""
    if request.fetch_offset < node.log.end_offset():
        max_bytes = min(request.max_bytes, node.config.max_fetch_bytes)
        records = node.log.read(request.fetch_offset, max(max_bytes, 1))
    hw = node.high_watermark
    known = -1 if hw is None else hw
    # Park only a fetcher that already knows our high watermark. One that does not (the commit
    # happened after its last answer, often because of this very fetch) is answered at once, so a
    # commit reaches followers and observers in one round trip instead of waiting for the next
    # write. Kafka <= 4.0 parks it and leaves it stale until the next record (KAFKA-14145,
    # KAFKA-18818); 4.1's KIP-1166 fixes it with a HighWatermark field in Fetch v18, which the
    # leader here infers from what it last sent.
    if not records and may_park and request.max_wait_ms > 0 and known <= progress.told_high_watermark:
        node.park_fetch(envelope, now_ms + request.max_wait_ms)
        return None
    progress.told_high_watermark = known
    return respond(ErrorCode.NONE, records=records)


def _update_replica_progress(
    node: RaftNode, state: LeaderState, request: FetchRequest, now_ms: int
) -> ReplicaProgress:
    key = request.replica_key
    leader_end = node.log.end_offset()
    if key.id < 0:
        # A reader without a node id (a tool tailing the log): not a replica, so not listed as an
        # observer (Kafka's LeaderState ignores negative ids too); never parked, it is told at once.
        return ReplicaProgress(key)
    # KIP-853: a voter by id and directory id; a replica with a voter's id but another directory
    # (its disk was replaced) is an observer and must not count toward the high watermark.
    is_voter = key.id in state.voters and node.voter_set.is_voter(key)
    if is_voter and key.id != state.local_key.id:
        progress = state.voters[key.id]
        if progress.key.directory_id == ZERO_UUID and key.directory_id != ZERO_UUID:
            progress.key = key
    else:
        progress = state.observers.setdefault(key, ReplicaProgress(key))
    progress.update_on_fetch(request.fetch_offset, leader_end, now_ms)
    if is_voter:
        node.maybe_advance_high_watermark(state, now_ms)
    return progress


def handle_fetch_response(node: RaftNode, source: int, response: FetchResponse, now_ms: int) -> bool:
    """The API-specific part, once ``RaftNode.preprocess_response`` (spec 3.3) let it through."""
    if response.partition_error_code != ErrorCode.NONE:
        return False
    state = node.quorum.state
    if not isinstance(state, FollowerState):
        return True
    if response.diverging_epoch is not None and response.diverging_epoch.epoch >= 0:
        truncate_on_divergence(node, response.diverging_epoch)
        node.on_log_truncated(now_ms)
    elif response.snapshot_id is not None and (
        response.snapshot_id.offset >= 0 or response.snapshot_id.epoch >= 0
    ):
        sid = response.snapshot_id
        if sid.offset < 0 or sid.epoch < 0:
            return False
        if state.download is None:
            state.download = SnapshotDownload(sid, node.log.store_snapshot(sid))
    else:
        records = response.records
        problem, has_control, whole = _check_fetched_records(node, records)
        if problem is not None:
            # Bytes from a peer: a bad batch is a failed fetch (back off and fetch again), never a
            # reason to stop this node or to write anything.
            _log.warning("node %s: ignoring fetched records from %s: %s", node.node_id, source, problem)
            return False
        if whole < len(records):
            # A leader that reads its log by bytes (Kafka's LogSegment.read) may cut the last batch:
            # append the whole ones, as Kafka's follower does; the next Fetch asks for the rest.
            records = records[:whole]
        if records:
            try:
                info = node.log.append_as_follower(records, state.epoch)  # (checks the CRCs)
            except CorruptRecordError as e:
                _log.warning("node %s: ignoring fetched records from %s: %s", node.node_id, source, e)
                return False
            # Persist before the next Fetch reveals the new end offset to the leader.
            node.log.flush()
            if has_control:  # only control batches carry voter sets (on_log_appended skips the rest)
                node.on_log_appended(records, now_ms)
            node.metrics.on_follower_append(info.last_offset - info.first_offset + 1, node.log, now_ms)
        node.update_follower_high_watermark(response.high_watermark, now_ms)
    state.on_fetched_from_leader(now_ms + node.config.fetch_timeout_ms, source)
    return True


def _check_fetched_records(node: RaftNode, records: bytes) -> tuple[str | None, bool, int]:
    """Why ``records`` must not be appended (a bad header, not contiguous, not at our end offset,
    a cut batch and nothing whole), or None; whether they hold a control batch; and where their
    whole batches end (a last batch cut short is left out). One pass over the headers; the CRCs
    are the log's to check (``ReplicatedLog.append_as_follower``)."""
    expected = node.log.end_offset()
    has_control = False
    whole = 0  # where the whole batches seen so far end
    try:
        for pos, header in iter_batch_headers(records):
            if header.base_offset != expected:
                return f"batch at offset {header.base_offset} where {expected} was expected", has_control, 0
            expected = header.next_offset
            has_control = has_control or header.is_control
            whole = pos + header.size_in_bytes
    except CorruptRecordError as e:
        return str(e), has_control, 0
    if whole == 0 and records:
        return f"no whole batch in {len(records)} bytes", False, 0
    return None, has_control, whole


def truncate_on_divergence(node: RaftNode, diverging: OffsetAndEpoch) -> None:
    """Spec 4.2: cut the log back to where it agrees with the leader; never below the HW."""
    end = node.log.end_offset()
    if diverging.epoch == 0:
        offset = min(diverging.offset, end)
    else:
        local = node.log.end_offset_for_epoch(diverging.epoch)
        offset = min(local.offset, diverging.offset) if local.epoch == diverging.epoch else local.offset
    # The largest HW this node ever knew, not the current one: a former leader's HW is unknown
    # (spec 4.3) yet everything below the HW it knew before is committed and must survive.
    committed = node.committed_offset
    if offset < committed:
        raise FatalError(
            f"divergence {diverging} would truncate to {offset}, below the high watermark {committed}"
        )
    node.log.truncate_to(offset)
