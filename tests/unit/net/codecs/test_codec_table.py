"""The codec table: one codec per raft API, and every raft RPC through it at every served version."""

from __future__ import annotations

import pytest
from codec_cases import (
    REQUESTS,
    RESPONSES,
    request_over_the_wire,
    response_over_the_wire,
    served_versions,
)

from kraft.net.codecs import CODECS, RAFT_APIS, vote
from kraft.protocol.messages import REGISTRY
from kraft.raft.messages import RaftRequest, RaftResponse, VoteRequest
from kraft.raft.rpc import RAFT_API_KEYS, api_key_of


def test_the_table_has_one_codec_per_raft_api_under_its_key() -> None:
    assert sorted(CODECS) == sorted(RAFT_API_KEYS) == [1, 52, 53, 54, 55, 59, 80, 81, 82]
    for key, codec in CODECS.items():
        assert codec.api is REGISTRY[key] is RAFT_APIS[key]
        assert api_key_of(codec.request_type.__new__(codec.request_type)) == key
        assert api_key_of(codec.response_type.__new__(codec.response_type)) == key


def test_every_raft_rpc_type_has_a_case() -> None:
    assert {type(r) for r in REQUESTS} == {c.request_type for c in CODECS.values()}
    assert {type(r) for r in RESPONSES} == {c.response_type for c in CODECS.values()}


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_request_survives_the_wire_at_its_highest_version(request_: RaftRequest) -> None:
    assert request_over_the_wire(request_, served_versions(request_)[-1]) == request_


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_request_at_every_version_keeps_what_the_version_can_carry(request_: RaftRequest) -> None:
    for version in served_versions(request_):
        if isinstance(request_, VoteRequest) and request_.pre_vote and version < vote.PRE_VOTE_MIN_VERSION:
            continue
        back = request_over_the_wire(request_, version)
        assert isinstance(back, type(request_)), (version, back)
        # Epochs and offsets exist in every version.
        for name in (
            "candidate_epoch",
            "leader_epoch",
            "fetch_offset",
            "last_offset",
            "position",
            "current_leader_epoch",
            "snapshot_id",
        ):
            if hasattr(request_, name):
                assert getattr(back, name) == getattr(request_, name), (name, version)


@pytest.mark.parametrize("response", RESPONSES, ids=lambda r: type(r).__name__)
def test_response_survives_the_wire_at_its_highest_version(response: RaftResponse) -> None:
    assert response_over_the_wire(response, served_versions(response)[-1]) == response


@pytest.mark.parametrize("response", RESPONSES, ids=lambda r: type(r).__name__)
def test_response_encodes_at_every_version(response: RaftResponse) -> None:
    for version in served_versions(response):
        back = response_over_the_wire(response, version)
        assert back.error_code == response.error_code
        assert getattr(back, "partition_error_code", 0) == getattr(response, "partition_error_code", 0)
