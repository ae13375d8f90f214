"""UpdateRaftVoter (KIP-853) against hand-built wire vectors (see ``codec_cases`` for their source),
and the leader endpoint its response names."""

from __future__ import annotations

import uuid

import pytest
from codec_cases import LISTENER, check_request_vector, check_response_vector

from kraft.net.codecs import update_raft_voter
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import UpdateRaftVoterRequest, UpdateRaftVoterResponse
from kraft.raft.types import Endpoint, ReplicaKey

DIR = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def test_request_bytes_match_the_hand_built_vector() -> None:
    request = UpdateRaftVoterRequest(
        cluster_id="c1",
        current_leader_epoch=7,
        voter_key=ReplicaKey(3, DIR),
        listeners=(Endpoint("CONTROLLER", "h3", 9093),),
        min_kraft_version=0,
        max_kraft_version=1,
    )
    check_request_vector(
        request,
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
    )


@pytest.mark.parametrize(
    ("response", "annotated"),
    [
        (
            UpdateRaftVoterResponse(
                error_code=0, leader_id=1, leader_epoch=7, leader_endpoints=(Endpoint(LISTENER, "h1", 9093),)
            ),
            """
            00 00 00 00                                   ; ThrottleTimeMs = 0
            00 00                                         ; ErrorCode = 0
            01                                            ; <tagged fields: 1>
            00 10                                         ; tag 0 (CurrentLeader), 16 bytes
            00 00 00 01                                   ;   LeaderId = 1
            00 00 00 07                                   ;   LeaderEpoch = 7
            03 68 31                                      ;   Host = 'h1'
            00 00 23 85                                   ;   Port = 9093 (int32)
            00                                            ;   <tagged fields: 0>
            """,
        ),
        (
            # No leader known: CurrentLeader keeps its defaults (-1, -1, "", 0) and is not written.
            UpdateRaftVoterResponse(error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER),
            """
            00 00 00 00                                   ; ThrottleTimeMs = 0
            00 06                                         ; ErrorCode = 6 (NOT_LEADER_OR_FOLLOWER)
            00                                            ; <tagged fields: 0>
            """,
        ),
    ],
    ids=["leader", "no-leader"],
)
def test_response_bytes_match_the_hand_built_vector(
    response: UpdateRaftVoterResponse, annotated: str
) -> None:
    check_response_vector(response, annotated)


def test_update_raft_voter_response_names_the_leader_endpoint_on_the_raft_listener() -> None:
    response = UpdateRaftVoterResponse(
        leader_id=1,
        leader_epoch=7,
        leader_endpoints=(Endpoint("OTHER", "h9", 1), Endpoint(LISTENER, "h1", 9093)),
    )
    current = update_raft_voter.encode_response(response, 0, LISTENER).current_leader
    assert (current.leader_id, current.leader_epoch, current.host, current.port) == (1, 7, "h1", 9093)
