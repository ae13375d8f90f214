"""Property-based round trips for every registered API, version, request and response.

``decode(encode(x)) == x`` over generated values, and ``encode(decode(b)) == b`` over the bytes
those values produce (the codec is canonical: one value, one encoding).
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import full_value, values

from kraft.common.errors import UnsupportedApiError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.api import (
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    encode_response_frame,
)
from kraft.protocol.framing import frame
from kraft.protocol.messages import REGISTRY, fetch, init_producer_id, offset_for_leader_epoch, produce


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
        "SaslHandshake": "0-1",
        "SaslAuthenticate": "0-2",
        "ListOffsets": "0-10",
        "Produce": "3-13",
        "InitProducerId": "0-6",
        "OffsetForLeaderEpoch": "0-4",
        "AllocateProducerIds": "0",
        "DescribeLogDirs": "1-5",
        "DescribeUserScramCredentials": "0",
        "AlterUserScramCredentials": "0",
        "DescribeAcls": "1-3",
        "CreateAcls": "1-3",
        "DeleteAcls": "1-3",
    }
    assert {api.name: str(api.versions) for api in REGISTRY.values()} == expected
    served = {api.name: str(api.served) for api in REGISTRY.values() if api.served != api.versions}
    # The ranges: CreateTopics 0-7, DeleteTopics 0-6 and DescribeConfigs 0-4 are served
    # whole (Kafka 4.0 dropped their oldest versions, KIP-896; older clients still send them).
    # Kafka 4.0: OffsetForLeaderEpoch v0-1 removed (KIP-896); InitProducerId v6 (KIP-939) unstable.
    assert served == {
        "Fetch": "13-17",
        "ListOffsets": "1-10",
        "UpdateFeatures": "0-1",
        "OffsetForLeaderEpoch": "2-4",
        "InitProducerId": "0-5",
    }


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
        # What the server writes: the same bytes behind their size, encoded in one buffer.
        assert encode_response_frame(api, version, -5, value) == frame(payload)


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
    built = [schema.cls.FetchableTopicResponse.PartitionData() for _ in range(2)]
    assert built[0].current_leader is not built[1].current_leader
    assert built[0].aborted_transactions is not built[1].aborted_transactions


# ---------------------------------------------------------------------------------------------------
# The data plane's schemas


def test_fetch_for_clients_is_the_raft_schema_served_from_v4() -> None:
    # One codec, two served ranges: a broker listener takes consumers' and followers' v4-12 (topics
    # by name) as well as v13-17; REGISTRY keeps the controller listener's 13-17.
    assert REGISTRY[1] is fetch.API
    client = fetch.CLIENT_API
    assert (client.key, client.name, client.versions, client.flexible) == (
        1,
        "Fetch",
        fetch.API.versions,
        fetch.API.flexible,
    )
    assert client.request is fetch.API.request and client.response is fetch.API.response
    assert (str(client.served), str(fetch.API.served)) == ("4-17", "13-17")
    brokers = {**REGISTRY, 1: client}
    for version in range(4, 18):
        value = full_value(client.request, version, client.is_flexible(version), version)
        payload = encode_request(client, version, 21, value, client_id="consumer")
        assert payload == encode_request(fetch.API, version, 21, value, client_id="consumer")
        header, body = decode_request(payload, brokers)
        assert (header.api_version, body) == (version, value)
        if version < 13:
            with pytest.raises(UnsupportedApiError):
                decode_request(payload, REGISTRY)


def test_produce_names_topics_by_id_from_v13_and_by_name_before() -> None:
    partition = produce.REQUEST.cls.TopicProduceData.PartitionProduceData(index=0, records=None)
    topic_id = uuid.UUID(int=7)
    topic = produce.REQUEST.cls.TopicProduceData(name="t", topic_id=topic_id, partition_data=[partition])
    body = produce.REQUEST.cls(acks=-1, timeout_ms=30000, topic_data=[topic])
    # Both are ignorable (KIP-516): the one the version lacks is dropped, not refused.
    v12 = produce.API.decode_request_body(produce.API.encode_request_body(body, 12), 12)
    v13 = produce.API.decode_request_body(produce.API.encode_request_body(body, 13), 13)
    assert (v12.topic_data[0].name, v12.topic_data[0].topic_id) == ("t", ZERO_UUID)
    assert (v13.topic_data[0].name, v13.topic_data[0].topic_id) == ("", topic_id)
    assert v12.transactional_id is None and v12.topic_data[0].partition_data[0].records is None


def test_produce_response_carries_kip_951_leader_hints_as_tags_from_v10_only() -> None:
    resp = produce.RESPONSE.cls
    part = resp.TopicProduceResponse.PartitionProduceResponse
    leader = part.LeaderIdAndEpoch(leader_id=2, leader_epoch=9)
    body = resp(
        responses=[
            resp.TopicProduceResponse(
                name="t", partition_responses=[part(index=0, error_code=6, current_leader=leader)]
            )
        ],
        node_endpoints=[resp.NodeEndpoint(node_id=2, host="h", port=9092)],
    )
    decoded = produce.API.decode_response_body(produce.API.encode_response_body(body, 10), 10)
    assert decoded == body
    # Before v10 the tagged fields do not exist: a non-default value cannot be written.
    with pytest.raises(ValueError, match=r"ProduceResponse\.node_endpoints=.* at version 9"):
        produce.API.encode_response_body(body, 9)
    body.node_endpoints = []
    with pytest.raises(ValueError, match=r"PartitionProduceResponse\.current_leader=.* at version 9"):
        produce.API.encode_response_body(body, 9)
    plain = resp(responses=[resp.TopicProduceResponse(name="t", partition_responses=[part(index=0)])])
    # Left at their defaults they cost nothing but the empty tagged sections.
    assert len(produce.API.encode_response_body(plain, 10)) == len(produce.API.encode_response_body(plain, 9))


def test_init_producer_id_refuses_to_drop_a_producer_id_older_versions_cannot_carry() -> None:
    # Not ignorable in Kafka's schema: a v3+ producer id or KIP-939's 2PC flag would change meaning.
    body = init_producer_id.REQUEST.cls(transactional_id=None, transaction_timeout_ms=60000, producer_id=5)
    with pytest.raises(ValueError, match=r"producer_id=5 at version 2"):
        init_producer_id.API.encode_request_body(body, 2)
    assert (
        init_producer_id.API.decode_request_body(init_producer_id.API.encode_request_body(body, 3), 3) == body
    )
    with pytest.raises(ValueError, match=r"enable2_pc=True at version 5"):
        init_producer_id.API.encode_request_body(init_producer_id.REQUEST.cls(enable2_pc=True), 5)
    # Defaults as Kafka declares them: the transactional id is "" (not null) unless set.
    assert init_producer_id.REQUEST.cls().transactional_id == ""
    assert (init_producer_id.RESPONSE.cls().producer_id, init_producer_id.RESPONSE.cls().producer_epoch) == (
        -1,
        0,
    )


def test_offset_for_leader_epoch_defaults_the_replica_id_to_the_debug_consumer() -> None:
    body = offset_for_leader_epoch.REQUEST.cls()
    assert body.replica_id == -2
    # Ignorable: a follower's id is dropped at v2 (before ReplicaId existed), not refused.
    follower = offset_for_leader_epoch.REQUEST.cls(replica_id=3)
    v2 = offset_for_leader_epoch.API.decode_request_body(
        offset_for_leader_epoch.API.encode_request_body(follower, 2), 2
    )
    assert v2.replica_id == -2
    end = offset_for_leader_epoch.RESPONSE.cls.OffsetForLeaderTopicResult.EpochEndOffset()
    assert (end.leader_epoch, end.end_offset) == (-1, -1)
