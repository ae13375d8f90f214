"""Vote: pre-votes need v2, and a request naming anything but the metadata partition is refused."""

from __future__ import annotations

import pytest
from codec_cases import REQUESTS

from kraft.net.codecs import EncodeVersionError, ImmediateResponse, vote
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import VoteRequest
from kraft.raft.types import METADATA_TOPIC


def test_pre_vote_cannot_be_encoded_below_vote_v2() -> None:
    pre_vote = next(r for r in REQUESTS if isinstance(r, VoteRequest) and r.pre_vote)
    for version in (0, 1):
        with pytest.raises(EncodeVersionError, match="pre-vote"):
            vote.encode_request(pre_vote, version)
    assert vote.encode_request(pre_vote, 2).topics[0].partitions[0].pre_vote is True


def _wire_vote(topics: list[tuple[str, list[int]]]) -> object:
    cls = vote.wire.REQUEST.cls
    return cls(
        cluster_id=None,
        topics=[
            cls.TopicData(
                topic_name=name, partitions=[cls.TopicData.PartitionData(partition_index=p) for p in parts]
            )
            for name, parts in topics
        ],
    )


@pytest.mark.parametrize(
    "topics",
    [
        [],
        [(METADATA_TOPIC, [])],
        [(METADATA_TOPIC, [0, 1])],
        [(METADATA_TOPIC, [1])],
        [("other", [0])],
        [(METADATA_TOPIC, [0]), ("other", [0])],
    ],
)
def test_vote_naming_anything_but_the_metadata_partition_is_an_invalid_request(
    topics: list[tuple[str, list[int]]],
) -> None:
    decoded = vote.decode_request(_wire_vote(topics), 2)
    assert isinstance(decoded, ImmediateResponse)
    assert decoded.body.error_code == ErrorCode.INVALID_REQUEST
    assert decoded.body.topics == []


def test_vote_naming_the_metadata_partition_reaches_the_core() -> None:
    assert isinstance(vote.decode_request(_wire_vote([(METADATA_TOPIC, [0])]), 2), VoteRequest)
