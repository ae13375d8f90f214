"""EndQuorumEpoch: v0 carries successor ids only; v1 ids with directory ids."""

from __future__ import annotations

from codec_cases import REQUESTS, of_type, request_over_the_wire

from kraft.net.codecs import ImmediateResponse, end_quorum_epoch
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import EndQuorumEpochRequest
from kraft.raft.types import ReplicaKey


def test_end_quorum_epoch_v0_maps_successor_ids_to_unknown_directories() -> None:
    back = request_over_the_wire(of_type(REQUESTS, EndQuorumEpochRequest), 0)
    assert isinstance(back, EndQuorumEpochRequest)
    assert back.preferred_candidates == (ReplicaKey(3), ReplicaKey(2))


def test_v1_keeps_the_successors_directory_ids() -> None:
    request = of_type(REQUESTS, EndQuorumEpochRequest)
    back = request_over_the_wire(request, 1)
    assert isinstance(back, EndQuorumEpochRequest)
    assert back.preferred_candidates == request.preferred_candidates
    assert all(k.directory_id.int != 0 for k in back.preferred_candidates)


def test_another_topic_is_an_invalid_request() -> None:
    request = of_type(REQUESTS, EndQuorumEpochRequest)
    body = end_quorum_epoch.encode_request(request, 1)
    body.topics[0].topic_name = "other"
    decoded = end_quorum_epoch.decode_request(body, 1)
    assert isinstance(decoded, ImmediateResponse)
    assert decoded.body.error_code == ErrorCode.INVALID_REQUEST
