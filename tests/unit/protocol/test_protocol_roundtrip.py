"""Property-based round trips for every registered API, version, request and response.

``decode(encode(x)) == x`` over generated values, and ``encode(decode(b)) == b`` over the bytes
those values produce (the codec is canonical: one value, one encoding).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import full_value, values

from kraft.protocol.api import decode_request, decode_response, encode_request, encode_response
from kraft.protocol.messages import REGISTRY


def _cases() -> list[tuple[int, int, str]]:
    return [
        (key, version, side)
        for key, api in sorted(REGISTRY.items())
        for version in range(api.versions.low, api.versions.high + 1)
        for side in ("request", "response")
    ]


CASES = _cases()


def _ids(case: tuple[int, int, str]) -> str:
    key, version, side = case
    return f"{REGISTRY[key].name}-v{version}-{side}"


def test_registry_holds_every_api_of_the_brief() -> None:
    expected = {
        "ApiVersions": "0-4",
        "Vote": "0-2",
        "BeginQuorumEpoch": "0-1",
        "EndQuorumEpoch": "0-1",
        "Fetch": "0-17",
        "FetchSnapshot": "0-1",
        "DescribeQuorum": "0-2",
        "Metadata": "0-13",
        "DescribeCluster": "0-2",
        "DescribeTopicPartitions": "0",
        "CreateTopics": "0-7",
        "DeleteTopics": "0-6",
        "BrokerRegistration": "0-4",
        "BrokerHeartbeat": "0-1",
        "AlterPartition": "0-3",
        "IncrementalAlterConfigs": "0-1",
        "DescribeConfigs": "0-4",
        "ElectLeaders": "0-2",
        "UpdateFeatures": "0-2",
        "AddRaftVoter": "0",
        "RemoveRaftVoter": "0",
        "UpdateRaftVoter": "0",
        "CreatePartitions": "0-3",
        "UnregisterBroker": "0",
        "ListOffsets": "0-10",
    }
    assert {api.name: str(api.versions) for api in REGISTRY.values()} == expected
    served = {api.name: str(api.served) for api in REGISTRY.values() if api.served != api.versions}
    # The ranges: CreateTopics 0-7, DeleteTopics 0-6 and DescribeConfigs 0-4 are served
    # whole (Kafka 4.0 dropped their oldest versions, KIP-896; older clients still send them).
    assert served == {"Fetch": "13-17", "ListOffsets": "1-10", "UpdateFeatures": "0-1"}


@pytest.mark.parametrize("case", CASES, ids=_ids)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_body_round_trips(case: tuple[int, int, str], data: st.DataObject) -> None:
    key, version, side = case
    api = REGISTRY[key]
    schema = api.request if side == "request" else api.response
    flexible = api.is_flexible(version)
    value = data.draw(values(schema, version, flexible))
    encoded = schema.encode(value, version, flexible)
    decoded = schema.decode(encoded, version, flexible)
    assert decoded == value
    assert schema.encode(decoded, version, flexible) == encoded


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_whole_message_round_trips_with_header(case: tuple[int, int, str]) -> None:
    key, version, side = case
    api = REGISTRY[key]
    flexible = api.is_flexible(version)
    if side == "request":
        if version not in api.served:
            pytest.skip("decode_request accepts served versions only (tested in test_protocol_untrusted)")
        value = full_value(api.request, version, flexible, version)
        payload = encode_request(api, version, 99, value, client_id=None)
        header, body = decode_request(payload, REGISTRY)
        assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
            key,
            version,
            99,
            None,
        )
        assert body == value
        assert encode_request(api, version, 99, body, client_id=None) == payload
    else:
        value = full_value(api.response, version, flexible, version)
        payload = encode_response(api, version, -5, value)
        assert decode_response(payload, api, version) == (-5, value)
        assert encode_response(api, version, -5, value) == payload


def test_unknown_tags_survive_decode_and_encode() -> None:
    api = REGISTRY[55]
    value = full_value(api.request, 2, True, 3)
    value._unknown_tags = [(7, b"\x01\x02"), (90, b"")]
    encoded = api.request.encode(value, 2, True)
    decoded = api.request.decode(encoded, 2, True)
    assert decoded._unknown_tags == [(7, b"\x01\x02"), (90, b"")]
    assert api.request.encode(decoded, 2, True) == encoded


def test_tagged_field_at_its_default_is_not_written() -> None:
    # Fetch v17 response partition: DivergingEpoch/CurrentLeader/SnapshotId default to (-1, -1).
    api = REGISTRY[1]
    schema = api.response
    part_cls = schema.cls.FetchableTopicResponse.PartitionData
    plain = part_cls(partition_index=0, records=b"")
    leader = part_cls.LeaderIdAndEpoch(leader_id=3)
    with_leader = part_cls(partition_index=0, records=b"", current_leader=leader)
    topic_cls = schema.cls.FetchableTopicResponse
    a = schema.encode(schema.cls(responses=[topic_cls(partitions=[plain])]), 17, True)
    b = schema.encode(schema.cls(responses=[topic_cls(partitions=[with_leader])]), 17, True)
    # Tag 1, size 9 (int32 + int32 + empty tagged section), leader 3, epoch -1, no nested tags.
    assert len(b) - len(a) == 2 + 9
    assert bytes.fromhex("010900000003ffffffff00") in b


def test_defaults_that_can_change_are_fresh_in_every_value() -> None:
    # Immutable defaults (numbers, strings, UUIDs) are shared between values; a list or a struct
    # default must not be, or changing one message would change the next.
    schema = REGISTRY[1].response  # Fetch: Responses (array), PartitionData's tagged structs
    first, second = schema.cls(), schema.cls()
    first.responses.append("x")
    assert second.responses == []
    encoded = schema.encode(
        schema.cls(
            responses=[
                schema.cls.FetchableTopicResponse(
                    partitions=[
                        schema.cls.FetchableTopicResponse.PartitionData(partition_index=0, records=b"")
                    ]
                )
            ]
        ),
        17,
        True,
    )
    one, two = (schema.decode(encoded, 17, True).responses[0].partitions[0] for _ in range(2))
    assert one.current_leader is not two.current_leader
    one.current_leader.leader_id = 7
    assert two.current_leader.leader_id == -1
