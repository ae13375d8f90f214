"""Wire exactness against kafka-python 3.0.12, an independent implementation of the same JSON specs.

For every API and version both sides implement, the same values must give the same bytes, and each
side must decode the other's bytes back to those values. Values come from our schemas: one
deterministic value with every field (tagged ones included) away from its default, then
Hypothesis-generated ones.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_python_bridge import KAFKA_PYTHON, from_kp, to_kp
from protocol_strategies import full_value, values

from kraft.protocol.api import Api, decode_request, decode_response, encode_request, encode_response
from kraft.protocol.messages import REGISTRY
from kraft.protocol.schema import StructType


def _cases() -> list[tuple[int, int, str]]:
    out = []
    for key, (kreq, _kresp) in sorted(KAFKA_PYTHON.items()):
        api = REGISTRY[key]
        for version in range(api.versions.low, min(api.versions.high, kreq.max_version) + 1):
            out.extend([(key, version, "request"), (key, version, "response")])
    return out


CASES = _cases()


def _ids(case: tuple[int, int, str]) -> str:
    key, version, side = case
    return f"{REGISTRY[key].name}-v{version}-{side}"


def _sides(key: int, side: str) -> tuple[Api, StructType, Any]:
    api = REGISTRY[key]
    kreq, kresp = KAFKA_PYTHON[key]
    return api, (api.request if side == "request" else api.response), (kreq if side == "request" else kresp)


def _normalise(key: int, side: str, value: Any) -> Any:
    # kafka-python always decodes an ApiVersions response carrying an error as v0 (the broker's
    # answer to an unsupported version), so only error-free bodies are comparable above v0.
    if key == 18 and side == "response":
        value.error_code = 0
    return value


def _check_both_ways(key: int, version: int, side: str, value: Any) -> None:
    api, ours, kp_cls = _sides(key, side)
    flexible = api.is_flexible(version)
    our_bytes = ours.encode(value, version, flexible)
    kp_bytes = bytes(to_kp(ours, value, kp_cls, version).encode(version=version))
    assert our_bytes == kp_bytes
    assert from_kp(ours, kp_cls.decode(our_bytes, version=version)) == value
    assert ours.decode(kp_bytes, version, flexible) == value


def test_every_kafka_python_api_is_covered() -> None:
    covered = {REGISTRY[key].name for key, _, _ in CASES}
    assert covered == {
        "Produce",
        "InitProducerId",
        "OffsetForLeaderEpoch",
        "ApiVersions",
        "Fetch",
        "ListOffsets",
        "DescribeQuorum",
        "Metadata",
        "DescribeCluster",
        "DescribeTopicPartitions",
        "CreateTopics",
        "DeleteTopics",
        "IncrementalAlterConfigs",
        "DescribeConfigs",
        "DescribeLogDirs",
        "ElectLeaders",
        "UpdateFeatures",
        "DescribeUserScramCredentials",
        "AlterUserScramCredentials",
        "DescribeAcls",
        "CreateAcls",
        "DeleteAcls",
        "SaslHandshake",
        "SaslAuthenticate",
    }
    # kafka-python lowers every API's minimum to 0, so every version we describe is compared
    # (Produce's start at 3: Kafka 4.x's schema no longer describes v0-2).
    assert len(CASES) == 2 * sum(
        min(REGISTRY[k].versions.high, KAFKA_PYTHON[k][0].max_version) - REGISTRY[k].versions.low + 1
        for k in KAFKA_PYTHON
    )
    assert {k: KAFKA_PYTHON[k][0].min_version for k in KAFKA_PYTHON} == dict.fromkeys(KAFKA_PYTHON, 0)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_same_bytes_as_kafka_python_with_every_field_set(case: tuple[int, int, str]) -> None:
    key, version, side = case
    api, ours, _ = _sides(key, side)
    for seed in range(3):
        value = _normalise(key, side, full_value(ours, version, api.is_flexible(version), seed))
        _check_both_ways(key, version, side, value)


@pytest.mark.parametrize("case", CASES, ids=_ids)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_same_bytes_as_kafka_python_for_generated_values(
    case: tuple[int, int, str], data: st.DataObject
) -> None:
    key, version, side = case
    api, ours, _ = _sides(key, side)
    value = _normalise(key, side, data.draw(values(ours, version, api.is_flexible(version))))
    _check_both_ways(key, version, side, value)


@pytest.mark.parametrize("flexible_version", [False, True])
def test_request_frame_with_header_matches_kafka_python(flexible_version: bool) -> None:
    # DescribeQuorum is flexible from v0, Metadata from v9: covers request header v1 and v2.
    key, version = (55, 2) if flexible_version else (3, 8)
    api, ours, kp_cls = _sides(key, "request")
    value = full_value(ours, version, api.is_flexible(version), 1)
    ours_bytes = encode_request(api, version, 12345, value, client_id="kraft-test")
    kp_msg = to_kp(ours, value, kp_cls, version)
    kp_msg.with_header(correlation_id=12345, client_id="kraft-test")
    assert ours_bytes == bytes(kp_msg.encode(version=version, header=True))
    header, body = decode_request(ours_bytes, REGISTRY)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        key,
        version,
        12345,
        "kraft-test",
    )
    assert body == value


@pytest.mark.parametrize(("key", "version"), [(3, 8), (3, 12), (55, 1), (18, 3)])
def test_response_frame_with_header_matches_kafka_python(key: int, version: int) -> None:
    # Response header v0 (Metadata v8, and ApiVersions v3 which always uses v0) and v1.
    api, ours, kp_cls = _sides(key, "response")
    value = _normalise(key, "response", full_value(ours, version, api.is_flexible(version), 2))
    ours_bytes = encode_response(api, version, 777, value)
    kp_msg = to_kp(ours, value, kp_cls, version)
    kp_msg.with_header(correlation_id=777)
    # The version was fixed at construction (passing it again trips kafka-python on responses).
    assert ours_bytes == bytes(kp_msg.encode(header=True))
    assert decode_response(ours_bytes, api, version) == (777, value)
    decoded = kp_cls.decode(ours_bytes, version=version, header=True)
    assert decoded.header.correlation_id == 777
