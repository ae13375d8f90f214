"""KIP-554 through a broker: Describe answered from its image, Alter forwarded to the controller."""

from __future__ import annotations

from typing import Any

from clusters import CLIENT_ID, BrokerCluster

from kraft.broker.client_apis import BROKER_APIS, FORWARDED_APIS
from kraft.metadata.scram import ScramMechanism
from kraft.node.listeners import BROKER_LISTENER_APIS, CONTROLLER_LISTENER_APIS
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import alter_user_scram_credentials, describe_user_scram_credentials
from kraft.security.scram import salted_password

LISTENER = "PLAINTEXT"
ALTER: Any = alter_user_scram_credentials.REQUEST.cls
DESCRIBE: Any = describe_user_scram_credentials.REQUEST.cls


def via_broker(cluster: BrokerCluster, broker: int, module: Any, body: Any) -> Any:
    cid = cluster.send(
        lambda c: ClientEnvelope(CLIENT_ID, broker, c, LISTENER, ApiRequest(module.API, 0, body))
    )
    envelope = cluster.wait_answer(cid)
    assert isinstance(envelope.body, ApiResponse)
    return envelope.body.body


def upsert(name: str, mechanism: ScramMechanism, iterations: int, salt: bytes) -> Any:
    return ALTER.ScramCredentialUpsertion(
        name=name,
        mechanism=int(mechanism),
        iterations=iterations,
        salt=salt,
        salted_password=salted_password(mechanism, "pw", salt, iterations),
    )


def test_the_apis_are_served_where_kafka_serves_them() -> None:
    assert 50 in BROKER_APIS and 50 in BROKER_LISTENER_APIS and 50 not in FORWARDED_APIS
    assert 51 in FORWARDED_APIS and 51 in BROKER_LISTENER_APIS and 51 in CONTROLLER_LISTENER_APIS


def test_alter_through_one_broker_is_visible_to_describe_on_it_at_once_and_on_the_others() -> None:
    cluster = BrokerCluster(controllers=1, brokers=(101, 102))
    cluster.run_until(cluster.all_running)
    body = ALTER(
        deletions=[],
        upsertions=[
            upsert("alice", ScramMechanism.SCRAM_SHA_256, 4096, b"salt-1"),
            upsert("bob", ScramMechanism.SCRAM_SHA_512, 8192, b"salt-2"),
        ],
    )
    answer = via_broker(cluster, 101, alter_user_scram_credentials, body)
    assert sorted((r.user, r.error_code) for r in answer.results) == [("alice", 0), ("bob", 0)]
    # Read your writes: broker 101 answered only once its own image held the credentials.
    described = via_broker(cluster, 101, describe_user_scram_credentials, DESCRIBE(users=None))
    assert described.error_code == 0
    assert [
        (r.user, [(c.mechanism, c.iterations) for c in r.credential_infos]) for r in described.results
    ] == [
        ("alice", [(1, 4096)]),
        ("bob", [(2, 8192)]),
    ]
    cluster.run_until(lambda: not cluster.broker(102).image.scram.is_empty)
    some = via_broker(
        cluster, 102, describe_user_scram_credentials, DESCRIBE(users=[DESCRIBE.UserName(name="carol")])
    )
    assert [(r.user, r.error_code, r.credential_infos) for r in some.results] == [
        ("carol", ErrorCode.RESOURCE_NOT_FOUND, [])
    ]
    gone = via_broker(
        cluster,
        102,
        alter_user_scram_credentials,
        ALTER(deletions=[ALTER.ScramCredentialDeletion(name="alice", mechanism=1)], upsertions=[]),
    )
    assert [(r.user, r.error_code) for r in gone.results] == [("alice", 0)]
    after = via_broker(cluster, 102, describe_user_scram_credentials, DESCRIBE(users=[]))
    assert [r.user for r in after.results] == ["bob"]


def test_controller_refusals_come_back_through_the_broker_unchanged() -> None:
    cluster = BrokerCluster(controllers=1, brokers=(101,))
    cluster.run_until(cluster.all_running)
    body = ALTER(deletions=[ALTER.ScramCredentialDeletion(name="nobody", mechanism=2)], upsertions=[])
    answer = via_broker(cluster, 101, alter_user_scram_credentials, body)
    assert [(r.user, r.error_code, r.error_message) for r in answer.results] == [
        ("nobody", ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
    ]
