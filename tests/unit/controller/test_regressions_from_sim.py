"""Controller bugs found by the controller simulation (``kraft sim sweep --scenario controller``).

1. ``controller-crash-restart`` seed 2 (CommittedImageAgreement): a commit must not drop the active
   controller's uncommitted timer writes from its latest image. Writes made by the controller's
   timers (session-expiry fencing, auto-rebalance, NoOp, bootstrap) have no pending response;
   ``handle_commit`` used to reset the latest image to the committed one whenever no *response* was
   pending, so such a write vanished from the latest image until it committed; a request handled in
   between was computed without it, and the image the controller adopted when that request's batch
   committed differed from the log (the standbys' replay).
2. ``controller-failover`` (activation counts): a former leader restarts resigned in its old epoch,
   and the core names it leader of that epoch. The controller took that for leadership: it claimed
   to be active (two active controllers in the metrics) with an empty image, and retried its
   activation on every poll (the bootstrap append cannot succeed), restarting every heartbeat
   session and counting a new activation each time, until the next epoch's leader was known.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any

from clusters import ControllerCluster

from kraft.controller.quorum_controller import ControllerConfig, QuorumController
from kraft.protocol.envelope import ApiRequest, ControllerEnvelope
from kraft.protocol.messages import broker_heartbeat, broker_registration
from kraft.raft.listener import CommittedBatch
from kraft.raft.types import LeaderAndEpoch

CLUSTER_ID = "kraft-test-cluster-id"


class ScriptedRaft:
    """The controller's raft client, with commits under the test's control."""

    def __init__(self) -> None:
        self.next_offset = 0
        self.batches: list[CommittedBatch] = []
        self.committed = 0  # batches handed to the controller so far

    def next_append_offset(self) -> int:
        return self.next_offset

    def schedule_append(self, epoch: int, records: Sequence[bytes]) -> int:
        base = self.next_offset
        self.next_offset += len(records)
        self.batches.append(CommittedBatch(base, self.next_offset - 1, epoch, 0, tuple(records)))
        return self.next_offset - 1

    def create_snapshot(self, snapshot_id: Any, last_contained_log_timestamp_ms: int) -> Any:
        return None

    def resign(self, epoch: int) -> None:
        pass

    def commit(self, controller: QuorumController, batches: int | None = None) -> None:
        """Commit the next ``batches`` appended batches (all of them by default)."""
        end = len(self.batches) if batches is None else self.committed + batches
        while self.committed < end:
            controller.handle_commit(self.batches[self.committed])
            self.committed += 1


def _request(controller: QuorumController, api: Any, version: int, now_ms: int, **fields: Any) -> None:
    body = api.REQUEST.cls(**fields)
    controller.handle(ControllerEnvelope(-1, 1, now_ms, ApiRequest(api.API, version, body)), now_ms)
    controller.poll(now_ms)


def test_a_commit_keeps_uncommitted_timer_writes_in_the_latest_image() -> None:
    raft = ScriptedRaft()
    config = ControllerConfig(
        session_timeout_ms=1000,
        max_idle_interval_ms=300,
        auto_leader_rebalance_enable=False,
        verify_leader_replay=True,
    )
    controller = QuorumController(
        node_id=1, cluster_id=CLUSTER_ID, raft=raft, rng=random.Random(0), config=config
    )
    controller.handle_leader_change(LeaderAndEpoch(1, 1))
    controller.poll(0)  # active: the bootstrap records
    raft.commit(controller)
    cls = broker_registration.REQUEST.cls
    _request(
        controller,
        broker_registration,
        4,
        10,
        broker_id=1,
        cluster_id=CLUSTER_ID,
        incarnation_id=uuid.UUID(int=1001),
        listeners=[cls.Listener(name="PLAINTEXT", host="b1", port=9092, security_protocol=0)],
        features=[
            cls.Feature(name="metadata.version", min_supported_version=1, max_supported_version=25),
            cls.Feature(
                name="eligible.leader.replicas.version", min_supported_version=0, max_supported_version=1
            ),
        ],
        rack=None,
        log_dirs=[uuid.UUID(int=(1 << 64) | 7)],
        previous_broker_epoch=-1,
    )
    raft.commit(controller)
    epoch = controller.image.brokers[1].epoch
    _request(
        controller,
        broker_heartbeat,
        1,
        20,
        broker_id=1,
        broker_epoch=epoch,
        current_metadata_offset=raft.next_offset,
        want_fence=False,
        want_shut_down=False,
    )
    raft.commit(controller)
    assert not controller.image.brokers[1].fenced

    controller.poll(500)  # the NoOp timer: one uncommitted batch
    noop_batches = len(raft.batches) - raft.committed
    controller.poll(1100)  # broker 1 stayed silent: its session expires, a timer write fences it
    assert controller.latest_image.brokers[1].fenced
    raft.commit(controller, noop_batches)  # the NoOp commits; the fence does not yet
    assert controller.latest_image.brokers[1].fenced, "the uncommitted fence vanished from the latest image"

    # A request now sees the fenced broker (and unfences it), and every adopted image matches
    # the replay of the log (verify_leader_replay raises on any difference).
    _request(
        controller,
        broker_heartbeat,
        1,
        1110,
        broker_id=1,
        broker_epoch=epoch,
        current_metadata_offset=raft.next_offset,
        want_fence=False,
        want_shut_down=False,
    )
    raft.commit(controller)
    assert not controller.image.brokers[1].fenced


def test_a_restarted_former_leader_does_not_claim_to_be_active() -> None:
    cluster = ControllerCluster(3)
    first = cluster.wait_active()
    leader = first.node_id
    cluster.crash(leader)
    cluster.restart(leader)  # the core restarts resigned in the epoch it led
    restarted = cluster.controller(leader)
    raft = cluster.raft(leader)

    def only_active_while_leading() -> None:
        assert not restarted.is_active or raft.leader_state() is not None

    # 2 s: a new leader is elected (possibly the restarted node, in a new epoch).
    cluster.run_for(2_000, watch=only_active_while_leading)
    assert cluster.active() is not None
    assert restarted.metrics.new_active_controllers <= 1  # once, if it won the next epoch
