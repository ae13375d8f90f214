"""AddRaftVoter (KIP-853) against hand-built wire vectors (see ``codec_cases`` for their source)."""

from __future__ import annotations

import uuid

import pytest
from codec_cases import check_request_vector, check_response_vector

from kraft.net.codecs import CODECS, add_raft_voter
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import AddRaftVoterRequest, AddRaftVoterResponse
from kraft.raft.types import Endpoint, ReplicaKey

DIR = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def test_request_bytes_match_the_hand_built_vector() -> None:
    request = AddRaftVoterRequest(
        cluster_id="c1",
        timeout_ms=30_000,
        voter_key=ReplicaKey(4, DIR),
        listeners=(Endpoint("CONTROLLER", "h4", 9093),),
    )
    check_request_vector(
        request,
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
    )


@pytest.mark.parametrize(
    ("response", "annotated"),
    [
        (
            AddRaftVoterResponse(),
            """
            00 00 00 00                                   ; ThrottleTimeMs = 0
            00 00                                         ; ErrorCode = 0
            00                                            ; ErrorMessage = null
            00                                            ; <tagged fields: 0>
            """,
        ),
        (
            AddRaftVoterResponse(error_code=ErrorCode.DUPLICATE_VOTER, error_message="dup"),
            """
            00 00 00 00                                   ; ThrottleTimeMs = 0
            00 7e                                         ; ErrorCode = 126 (DUPLICATE_VOTER)
            04 64 75 70                                   ; ErrorMessage = 'dup'
            00                                            ; <tagged fields: 0>
            """,
        ),
    ],
    ids=["ok", "duplicate"],
)
def test_response_bytes_match_the_hand_built_vector(response: AddRaftVoterResponse, annotated: str) -> None:
    check_response_vector(response, annotated)


def test_voter_change_apis_are_served_raft_apis() -> None:
    assert [CODECS[k].api.name for k in (80, 81, 82)] == [
        "AddRaftVoter",
        "RemoveRaftVoter",
        "UpdateRaftVoter",
    ]
    assert CODECS[80] is add_raft_voter.CODEC
