"""KIP-966 through an unmodified client: Eligible Leader Replicas on real broker processes.

A partition with replicas [A, B, C] (brokers 4, 5, 6) and min.insync.replicas=2 loses its brokers
one way or another: C is killed with kill -9 (fenced when its session expires: an *unclean*
shutdown), B and then the leader A stop cleanly (controlled shutdown). kafka-python's
DescribeTopicPartitions (API 75) shows ISR, ELR and LastKnownELR moving as spec 5.8 says:

    step                          ISR      ELR     LKE   leader
    start                         A,B,C    -       -     A
    kill -9 C (fenced)            A,B      -       -     A      |ISR| = m: nobody enters the ELR
    stop B cleanly                A        B       -     A      below m: B leaves cleanly, into the ELR
    stop A cleanly                -        A,B     A     -1     no eligible replica is active
    restart C (unclean)           -        A,B     A     -1     C is not eligible: no election
    restart B (clean)             B        A       -     B      elected from the ELR (clean)
    ... B adds C back             B,C      -       -     B      |ISR| = m: the ELR clears
    restart A (clean)             B,C,A    -       -     B

and at every step a new leader comes only from the ISR or ELR of the step before.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

import pytest
from local_cluster import LocalCluster

kafka_admin = pytest.importorskip("kafka.admin")

pytestmark = pytest.mark.slow


def state(admin: Any, topic: str) -> tuple[list[int], list[int], list[int], int]:
    """(ISR, ELR, LastKnownELR, leader) of partition 0, as the client sees it. kafka-python sends
    the request to a broker of its cached metadata, which may be one the test just stopped: a
    refused connection is retried (the client refreshes its metadata meanwhile)."""
    from kafka.errors import KafkaConnectionError

    for attempt in range(20):
        try:
            (t,) = admin.describe_topic_partitions([topic])["topics"]
            break
        except KafkaConnectionError:
            if attempt == 19:
                raise
            time.sleep(0.25)
    (p,) = t["partitions"]
    # kafka-python decodes an empty compact array in these nullable fields as None.
    return (
        sorted(p["isr_nodes"]),
        sorted(p["eligible_leader_replicas"] or []),
        sorted(p["last_known_elr"] or []),
        p["leader_id"],
    )


def test_eligible_leader_replicas_through_kafka_python(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3, brokers=3)
    cluster.start_all()
    cluster.wait_for_leader()
    cluster.wait_for_brokers()
    a, b, c = cluster.broker_ids
    history: list[tuple[list[int], list[int], list[int], int]] = []

    def admin_via(broker: int) -> Any:
        return kafka_admin.KafkaAdminClient(
            bootstrap_servers=cluster.bootstrap_servers([broker]), request_timeout_ms=20_000
        )

    def expect(
        admin: Any, want: tuple[list[int], list[int], list[int], int], what: str, timeout_s: float = 20
    ) -> None:
        deadline = time.monotonic() + timeout_s
        seen = state(admin, "elr")
        while seen != want and time.monotonic() < deadline:
            time.sleep(0.1)
            seen = state(admin, "elr")
        assert seen == want, f"{what}: expected ISR/ELR/LKE/leader {want}, saw {seen}"
        if history and seen[3] != -1 and seen[3] != history[-1][3]:
            previous = history[-1]
            assert seen[3] in previous[0] + previous[1], (
                f"{what}: leader {seen[3]} not from ISR or ELR {previous}"
            )
        history.append(seen)

    admin = admin_via(a)
    admin.create_topics(
        [
            kafka_admin.NewTopic(
                "elr", replica_assignments={0: [a, b, c]}, topic_configs={"min.insync.replicas": "2"}
            )
        ]
    )
    expect(admin, ([a, b, c], [], [], a), "created")

    cluster.kill(c)  # kill -9: fenced once its session (3 s here) expires
    expect(admin, ([a, b], [], [], a), "C fenced")

    cluster.kill(b, signal.SIGTERM)  # controlled shutdown
    expect(admin, ([a], [b], [], a), "B stopped cleanly below min ISR")

    admin.close()
    cluster.kill(a, signal.SIGTERM)  # the leader, cleanly: nobody eligible is left running
    cluster.start(c)  # C comes back uncleanly
    cluster.wait_for_brokers([c])
    admin = admin_via(c)
    expect(admin, ([], [a, b], [a], -1), "A stopped cleanly, C back uncleanly")
    time.sleep(2)  # a few heartbeats: C stays unelected, it may have lost data
    assert state(admin, "elr") == ([], [a, b], [a], -1)

    cluster.start(b)  # B comes back cleanly: it was eligible, so it is elected
    history.append(([], [a, b], [a], -1))
    expect(admin, ([b, c], [], [], b), "B elected from the ELR, then C added back")

    cluster.start(a)
    expect(admin, ([a, b, c], [], [], b), "A back cleanly")
    admin.close()
