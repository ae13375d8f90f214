"""Wire vectors for the KIP-853 voter-change RPCs as ``raft_codec`` writes and reads them.

Source of the bytes: no independent implementation is available here (kafka-python only lists the
API keys 80-82, without schemas), so each vector is assembled by hand, field by field, from
Kafka's JSON definitions (``AddRaftVoterRequest.json`` etc., all flexible v0: compact strings and
arrays are length+1 varints, a nullable string null is 0x00, every struct ends with its tagged
fields). The codec must produce exactly these bytes from the core's dataclasses and read them back.
"""

from __future__ import annotations

import uuid

import pytest

from kraft.net import raft_codec as rc
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
)
from kraft.raft.types import Endpoint, ReplicaKey

DIR = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
LISTENER = "CONTROLLER"


def _hex(annotated: str) -> bytes:
    """Hex bytes with ``;`` comments, as in tests/golden."""
    return bytes.fromhex("".join(line.split(";")[0] for line in annotated.splitlines()))


REQUEST_VECTORS: list[tuple[RaftRequest, str]] = [
    (
        AddRaftVoterRequest(
            cluster_id="c1",
            timeout_ms=30_000,
            voter_key=ReplicaKey(4, DIR),
            listeners=(Endpoint("CONTROLLER", "h4", 9093),),
        ),
        """
        03 63 31                                          ; ClusterId = 'c1' (compact, len+1)
        00 00 75 30                                       ; TimeoutMs = 30000
        00 00 00 04                                       ; VoterId = 4
        00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff   ; VoterDirectoryId
        02                                                ; Listeners: 1 element (len+1)
        0b 43 4f 4e 54 52 4f 4c 4c 45 52                  ;   Name = 'CONTROLLER'
        03 68 34                                          ;   Host = 'h4'
        23 85                                             ;   Port = 9093 (uint16)
        00                                                ;   <tagged fields: 0>
        00                                                ; <tagged fields: 0>
        """,
    ),
    (
        RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(2, DIR)),
        """
        00                                                ; ClusterId = null
        00 00 00 02                                       ; VoterId = 2
        00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff   ; VoterDirectoryId
        00                                                ; <tagged fields: 0>
        """,
    ),
    (
        UpdateRaftVoterRequest(
            cluster_id="c1",
            current_leader_epoch=7,
            voter_key=ReplicaKey(3, DIR),
            listeners=(Endpoint("CONTROLLER", "h3", 9093),),
            min_kraft_version=0,
            max_kraft_version=1,
        ),
        """
        03 63 31                                          ; ClusterId = 'c1'
        00 00 00 07                                       ; CurrentLeaderEpoch = 7
        00 00 00 03                                       ; VoterId = 3
        00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff   ; VoterDirectoryId
        02                                                ; Listeners: 1 element
        0b 43 4f 4e 54 52 4f 4c 4c 45 52                  ;   Name = 'CONTROLLER'
        03 68 33                                          ;   Host = 'h3'
        23 85                                             ;   Port = 9093
        00                                                ;   <tagged fields: 0>
        00 00                                             ; KRaftVersionFeature.MinSupportedVersion = 0
        00 01                                             ; KRaftVersionFeature.MaxSupportedVersion = 1
        00                                                ;   <tagged fields: 0>
        00                                                ; <tagged fields: 0>
        """,
    ),
]

RESPONSE_VECTORS: list[tuple[RaftResponse, str]] = [
    (
        AddRaftVoterResponse(),
        """
        00 00 00 00                                       ; ThrottleTimeMs = 0
        00 00                                             ; ErrorCode = 0
        00                                                ; ErrorMessage = null
        00                                                ; <tagged fields: 0>
        """,
    ),
    (
        AddRaftVoterResponse(error_code=ErrorCode.DUPLICATE_VOTER, error_message="dup"),
        """
        00 00 00 00                                       ; ThrottleTimeMs = 0
        00 7e                                             ; ErrorCode = 126 (DUPLICATE_VOTER)
        04 64 75 70                                       ; ErrorMessage = 'dup'
        00                                                ; <tagged fields: 0>
        """,
    ),
    (
        RemoveRaftVoterResponse(error_code=ErrorCode.VOTER_NOT_FOUND, error_message="gone"),
        """
        00 00 00 00                                       ; ThrottleTimeMs = 0
        00 7f                                             ; ErrorCode = 127 (VOTER_NOT_FOUND)
        05 67 6f 6e 65                                    ; ErrorMessage = 'gone'
        00                                                ; <tagged fields: 0>
        """,
    ),
    (
        UpdateRaftVoterResponse(
            error_code=0, leader_id=1, leader_epoch=7, leader_endpoints=(Endpoint(LISTENER, "h1", 9093),)
        ),
        """
        00 00 00 00                                       ; ThrottleTimeMs = 0
        00 00                                             ; ErrorCode = 0
        01                                                ; <tagged fields: 1>
        00 10                                             ; tag 0 (CurrentLeader), 16 bytes
        00 00 00 01                                       ;   LeaderId = 1
        00 00 00 07                                       ;   LeaderEpoch = 7
        03 68 31                                          ;   Host = 'h1'
        00 00 23 85                                       ;   Port = 9093 (int32)
        00                                                ;   <tagged fields: 0>
        """,
    ),
    (
        # No leader known: CurrentLeader keeps its defaults (-1, -1, "", 0) and is not written.
        UpdateRaftVoterResponse(error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER),
        """
        00 00 00 00                                       ; ThrottleTimeMs = 0
        00 06                                             ; ErrorCode = 6 (NOT_LEADER_OR_FOLLOWER)
        00                                                ; <tagged fields: 0>
        """,
    ),
]


@pytest.mark.parametrize(("request_", "annotated"), REQUEST_VECTORS, ids=lambda x: type(x).__name__)
def test_request_bytes_match_the_hand_built_vector(request_: RaftRequest, annotated: str) -> None:
    key = rc.api_key_of(request_)
    api = rc.RAFT_APIS[key]
    expected = _hex(annotated)
    assert api.encode_request_body(rc.encode_request(request_, 0), 0) == expected
    assert rc.decode_request(key, api.decode_request_body(expected, 0)) == request_


@pytest.mark.parametrize(("response", "annotated"), RESPONSE_VECTORS, ids=lambda x: type(x).__name__)
def test_response_bytes_match_the_hand_built_vector(response: RaftResponse, annotated: str) -> None:
    key = rc.api_key_of(response)
    api = rc.RAFT_APIS[key]
    expected = _hex(annotated)
    body = rc.encode_response(response, 0, listener_name=LISTENER)
    assert api.encode_response_body(body, 0) == expected
    assert rc.decode_response(key, api.decode_response_body(expected, 0), listener_name=LISTENER) == response


def test_update_raft_voter_response_names_the_leader_endpoint_on_the_raft_listener() -> None:
    response = UpdateRaftVoterResponse(
        leader_id=1,
        leader_epoch=7,
        leader_endpoints=(Endpoint("OTHER", "h9", 1), Endpoint(LISTENER, "h1", 9093)),
    )
    current = rc.encode_response(response, 0, listener_name=LISTENER).current_leader
    assert (current.leader_id, current.leader_epoch, current.host, current.port) == (1, 7, "h1", 9093)


def test_voter_change_apis_are_served_raft_apis() -> None:
    assert {80, 81, 82} <= set(rc.RAFT_APIS)
    assert [rc.RAFT_APIS[k].name for k in (80, 81, 82)] == [
        "AddRaftVoter",
        "RemoveRaftVoter",
        "UpdateRaftVoter",
    ]
