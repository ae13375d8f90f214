"""kraft's ReplicaLogInfo field of BrokerHeartbeat (tag 10000) keeps the wire Kafka's.

No independent encoder of BrokerHeartbeat is at hand (kafka-python 3.0.12 names API key 63 and has
no message class for it), so Kafka's side is Kafka's own schema, declared here from its
``BrokerHeartbeatRequest.json`` (v0-1, ``OfflineLogDirs`` tagged 0 from v1): what a Kafka broker
sends and how a Kafka controller reads. The annotated vector with the tag set is in
``tests/golden/protocol/broker_heartbeat_v1_request_replica_log_info.hex``.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kraft.protocol.messages import broker_heartbeat
from kraft.protocol.schema import BOOL, INT32, INT64, UUID, array, f, struct

# Kafka's BrokerHeartbeatRequest (4.x), field for field.
KAFKA_REQUEST = struct(
    "BrokerHeartbeatRequest",
    [
        f("BrokerId", INT32, "0+"),
        f("BrokerEpoch", INT64, "0+", default=-1),
        f("CurrentMetadataOffset", INT64, "0+"),
        f("WantFence", BOOL, "0+"),
        f("WantShutDown", BOOL, "0+"),
        f("OfflineLogDirs", array(UUID), "1+", tag=0, tagged="1+"),
    ],
)
R: Any = broker_heartbeat.REQUEST.cls
K: Any = KAFKA_REQUEST.cls
TOPIC = uuid.UUID(int=0x7011)
OFFLINE = [uuid.UUID(int=0x5E)]


def _ours(**fields: Any) -> Any:
    base: dict[str, Any] = dict(
        broker_id=101,
        broker_epoch=59,
        current_metadata_offset=70,
        want_fence=False,
        want_shut_down=False,
        offline_log_dirs=[],
    )
    return R(**{**base, **fields})


def _log_info() -> list[Any]:
    P = R.TopicLogInfo.PartitionLogInfo
    return [
        R.TopicLogInfo(
            topic_id=TOPIC,
            partitions=[
                P(partition_index=0, partition_epoch=7, last_written_leader_epoch=1, log_end_offset=291),
                P(partition_index=3, partition_epoch=2, last_written_leader_epoch=-1, log_end_offset=0),
            ],
        )
    ]


@pytest.mark.parametrize("version", [0, 1])
def test_replica_log_info_round_trips_in_every_version(version: int) -> None:
    request = _ours(replica_log_info=_log_info())
    data = broker_heartbeat.REQUEST.encode(request, version, True)
    assert bytes([0x90, 0x4E]) in data  # tag 10000 as an unsigned varint
    decoded = broker_heartbeat.REQUEST.decode(data, version, True)
    assert decoded.replica_log_info == request.replica_log_info
    assert decoded.replica_log_info[0].partitions[0].log_end_offset == 291


@pytest.mark.parametrize("version", [0, 1])
def test_a_heartbeat_without_reports_has_exactly_kafkas_bytes(version: int) -> None:
    dirs = OFFLINE if version >= 1 else []
    ours = broker_heartbeat.REQUEST.encode(_ours(offline_log_dirs=dirs), version, True)
    kafka = KAFKA_REQUEST.encode(
        K(
            broker_id=101,
            broker_epoch=59,
            current_metadata_offset=70,
            want_fence=False,
            want_shut_down=False,
            offline_log_dirs=dirs,
        ),
        version,
        True,
    )
    assert ours == kafka


def test_a_kafka_brokers_heartbeat_decodes_with_no_reports_and_reencodes_the_same() -> None:
    kafka = KAFKA_REQUEST.encode(
        K(
            broker_id=4,
            broker_epoch=12,
            current_metadata_offset=99,
            want_fence=True,
            want_shut_down=False,
            offline_log_dirs=OFFLINE,
        ),
        1,
        True,
    )
    decoded = broker_heartbeat.REQUEST.decode(kafka, 1, True)
    assert decoded.replica_log_info == []
    assert decoded.offline_log_dirs == OFFLINE
    assert broker_heartbeat.REQUEST.encode(decoded, 1, True) == kafka


def test_a_kafka_controller_reads_our_heartbeat_and_skips_the_unknown_tag() -> None:
    data = broker_heartbeat.REQUEST.encode(
        _ours(offline_log_dirs=OFFLINE, replica_log_info=_log_info()), 1, True
    )
    seen = KAFKA_REQUEST.decode(data, 1, True)
    assert (seen.broker_id, seen.broker_epoch, seen.current_metadata_offset) == (101, 59, 70)
    assert seen.offline_log_dirs == OFFLINE
    assert [tag for tag, _ in seen._unknown_tags] == [10_000]
