"""BeginQuorumEpoch: the leader's endpoints travel, and a wrong partition is an invalid request."""

from __future__ import annotations

from codec_cases import REQUESTS, of_type

from kraft.net.codecs import ImmediateResponse, begin_quorum_epoch
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import BeginQuorumEpochRequest


def test_leader_endpoints_are_written_with_their_listener_names() -> None:
    request = of_type(REQUESTS, BeginQuorumEpochRequest)
    body = begin_quorum_epoch.encode_request(request, 1)
    assert [(e.name, e.host, e.port) for e in body.leader_endpoints] == [("CONTROLLER", "10.0.0.1", 9093)]


def test_another_partition_is_an_invalid_request_answered_without_the_core() -> None:
    request = of_type(REQUESTS, BeginQuorumEpochRequest)
    body = begin_quorum_epoch.encode_request(request, 1)
    body.topics[0].partitions[0].partition_index = 2
    decoded = begin_quorum_epoch.decode_request(body, 1)
    assert isinstance(decoded, ImmediateResponse)
    assert decoded.body.error_code == ErrorCode.INVALID_REQUEST
    assert decoded.body.topics == []
