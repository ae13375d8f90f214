"""DescribeQuorum (API 55): the leader's view of every replica (KIP-836 timestamps)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.config import OBSERVER_SESSION_TIMEOUT_MS
from kraft.raft.messages import DescribeQuorumResponse, ReplicaState
from kraft.raft.states import LeaderState, ReplicaProgress

if TYPE_CHECKING:
    from kraft.raft.node import RaftNode


def _replica_state(progress: ReplicaProgress) -> ReplicaState:
    return ReplicaState(
        replica_id=progress.key.id,
        replica_directory_id=progress.key.directory_id,
        log_end_offset=-1 if progress.end_offset is None else progress.end_offset,
        last_fetch_timestamp=progress.last_fetch_ms,
        last_caught_up_timestamp=progress.last_caught_up_ms,
    )


def build_describe_quorum_response(node: RaftNode, now_ms: int) -> DescribeQuorumResponse:
    state = node.quorum.state
    if not isinstance(state, LeaderState):
        return DescribeQuorumResponse(
            partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
            partition_error_message=f"node {node.node_id} is not the leader (state {node.role.name})",
        )
    expired = [
        k for k, p in state.observers.items() if p.last_fetch_ms < now_ms - OBSERVER_SESSION_TIMEOUT_MS
    ]
    for key in expired:
        del state.observers[key]
    voters: list[ReplicaState] = []
    for voter_id, progress in state.voters.items():
        if voter_id == state.local_key.id:
            # The leader is always caught up with itself: both timestamps are "now" (KIP-836).
            voters.insert(
                0,
                ReplicaState(
                    replica_id=voter_id,
                    replica_directory_id=state.local_key.directory_id,
                    log_end_offset=node.log.end_offset(),
                    last_fetch_timestamp=now_ms,
                    last_caught_up_timestamp=now_ms,
                ),
            )
        else:
            voters.append(_replica_state(progress))
    hw = node.high_watermark
    return DescribeQuorumResponse(
        leader_id=state.local_key.id,
        leader_epoch=state.epoch,
        high_watermark=-1 if hw is None else hw,
        current_voters=tuple(voters),
        observers=tuple(_replica_state(p) for p in state.observers.values()),
        nodes={v.key.id: v.endpoints for v in node.voter_set},
    )
