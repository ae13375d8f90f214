"""RemoveRaftVoter (KIP-853) against hand-built wire vectors (see ``codec_cases`` for their source)."""

from __future__ import annotations

import uuid

from codec_cases import check_request_vector, check_response_vector

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import RemoveRaftVoterRequest, RemoveRaftVoterResponse
from kraft.raft.types import ReplicaKey

DIR = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def test_request_bytes_match_the_hand_built_vector() -> None:
    check_request_vector(
        RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(2, DIR)),
        """
        00                                                ; ClusterId = null
        00 00 00 02                                       ; VoterId = 2
        00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff   ; VoterDirectoryId
        00                                                ; <tagged fields: 0>
        """,
    )


def test_response_bytes_match_the_hand_built_vector() -> None:
    check_response_vector(
        RemoveRaftVoterResponse(error_code=ErrorCode.VOTER_NOT_FOUND, error_message="gone"),
        """
        00 00 00 00                                       ; ThrottleTimeMs = 0
        00 7f                                             ; ErrorCode = 127 (VOTER_NOT_FOUND)
        05 67 6f 6e 65                                    ; ErrorMessage = 'gone'
        00                                                ; <tagged fields: 0>
        """,
    )
