"""Break one rule of the real quorum controller and show the simulator names the broken invariant.

These prove the controller checkers can fail: every controller invariant of
``kraft.sim.controller_invariants`` is shown failing against a planted bug, on the scenario that
exercises it. A run stops at its first violation, so each costs well under a second.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import kraft.controller.config_control as config_control
import kraft.controller.partition_change as partition_change
import kraft.controller.replication_control as replication_control
import kraft.metadata.snapshot_scheduler as snapshot_scheduler
from kraft.controller.cluster_control import ClusterControl
from kraft.controller.quorum_controller import QuorumController
from kraft.metadata.records import MetadataRecordType, decode_record, encode_record, make_record
from kraft.sim.runner import run_seed


def _found(scenario: str, seeds: tuple[int, ...]) -> set[str]:
    names: set[str] = set()
    for seed in seeds:
        names |= {v["invariant"] for v in run_seed(scenario, seed)["violations"]}
    return names


def test_the_unbroken_controller_passes_the_scenarios_used_below() -> None:
    for scenario in ("controller-fencing", "controller-broker-churn", "controller-min-isr-change"):
        assert _found(scenario, (1,)) == set(), scenario


def test_a_leader_dropped_from_its_isr_breaks_leader_in_isr(monkeypatch: pytest.MonkeyPatch) -> None:
    original = replication_control.build_partition_change

    def leader_left_out(partition: Any, **kwargs: Any) -> Any:
        outcome = original(partition, **kwargs)
        change = outcome.change
        if change is not None and change.isr is not None and len(change.isr) > 1:
            leader = change.leader if change.leader >= 0 else partition.leader
            if leader in change.isr:
                isr = tuple(r for r in change.isr if r != leader)
                return dataclasses.replace(outcome, change=dataclasses.replace(change, isr=isr))
        return outcome

    monkeypatch.setattr(replication_control, "build_partition_change", leader_left_out)
    assert "LeaderInIsr" in _found("controller-fencing", (1, 2))


def test_an_isr_member_kept_in_the_elr_breaks_isr_elr_disjoint(monkeypatch: pytest.MonkeyPatch) -> None:
    original = replication_control.build_partition_change

    def overlapping(partition: Any, **kwargs: Any) -> Any:
        outcome = original(partition, **kwargs)
        change = outcome.change
        if change is not None and change.elr:
            isr = change.isr if change.isr is not None else partition.isr
            if isr:
                elr = tuple(sorted({*change.elr, isr[0]}))
                return dataclasses.replace(outcome, change=dataclasses.replace(change, elr=elr))
        return outcome

    monkeypatch.setattr(replication_control, "build_partition_change", overlapping)
    assert "IsrElrDisjoint" in _found("controller-fencing", (1, 2))


def test_skipping_the_elr_clear_on_a_min_isr_change_breaks_elr_only_below_min_isr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never_clear(partition: Any, **kwargs: Any) -> None:
        return None  # the ConfigRecord is written, the PartitionChangeRecords of spec 5.3.5 are not

    monkeypatch.setattr(config_control, "elr_cleared_by_min_isr_change", never_clear)
    assert "ElrOnlyBelowMinIsr" in _found("controller-min-isr-change", (1, 2, 3))


def test_electing_a_replica_outside_isr_and_elr_breaks_leader_from_isr_or_elr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = partition_change._elect

    def outsider(p: Any, **kwargs: Any) -> tuple[int, bool]:
        winner, unclean = original(p, **kwargs)
        if winner != p.leader and not unclean:
            eligible = set(kwargs["isr"]) | set(kwargs["elr"]) | set(p.isr) | set(p.elr)
            for r in kwargs["replicas"]:
                if r not in eligible and kwargs["is_acceptable_leader"](r):
                    return r, False
        return winner, unclean

    monkeypatch.setattr(partition_change, "_elect", outsider)
    assert "LeaderFromIsrOrElr" in _found("controller-fencing", (1, 2, 3))


def test_a_standby_that_skips_a_record_breaks_committed_image_agreement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = QuorumController.handle_commit
    noop = encode_record(make_record(MetadataRecordType.NO_OP))

    def skipping(self: QuorumController, batch: Any) -> None:
        if not self.is_active and batch.records:
            kinds = [decode_record(r).type for r in batch.records]
            if MetadataRecordType.PARTITION_CHANGE in kinds:
                i = kinds.index(MetadataRecordType.PARTITION_CHANGE)
                records = (*batch.records[:i], noop, *batch.records[i + 1 :])
                batch = dataclasses.replace(batch, records=records)
        original(self, batch)

    monkeypatch.setattr(QuorumController, "handle_commit", skipping)
    assert "CommittedImageAgreement" in _found("controller-fencing", (1,))


def test_a_snapshot_missing_a_topic_breaks_committed_image_agreement(monkeypatch: pytest.MonkeyPatch) -> None:
    # Caught when a controller loads such a snapshot, or by the check of a controller against its
    # own snapshot plus log (before a crash, every few thousand events, at the end).
    original = snapshot_scheduler.snapshot_records_bytes

    def lossy(image: Any, **kwargs: Any) -> list[bytes]:
        records = original(image, **kwargs)
        dropped = _first_topic(records)
        return [r for r in records if r not in dropped]

    monkeypatch.setattr(snapshot_scheduler, "snapshot_records_bytes", lossy)
    assert "CommittedImageAgreement" in _found("controller-snapshots", (1,))


def _first_topic(records: list[bytes]) -> list[bytes]:
    """The TopicRecord of the first topic in a snapshot and its PartitionRecords."""
    out: list[bytes] = []
    topic_id = None
    for r in records:
        decoded = decode_record(r)
        if decoded.type == MetadataRecordType.TOPIC and topic_id is None:
            topic_id = decoded.data.topic_id
            out.append(r)
        elif decoded.type == MetadataRecordType.PARTITION and decoded.data.topic_id == topic_id:
            out.append(r)
    return out


def test_a_broker_epoch_going_backwards_breaks_monotonic_broker_epoch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = ClusterControl.register_broker

    def backwards(
        self: ClusterControl, image: Any, request: Any, version: int, now_ms: int, offset: int
    ) -> Any:
        outcome = original(self, image, request, version, now_ms, offset)
        existing = image.brokers.get(request.broker_id)
        new_incarnation = existing is not None and existing.incarnation_id != request.incarnation_id
        if new_incarnation and outcome.response.error_code == 0:
            epoch = existing.epoch - 1
            for record in outcome.records:
                if record.type == MetadataRecordType.REGISTER_BROKER:
                    record.data.broker_epoch = epoch
            outcome.response.broker_epoch = epoch
        return outcome

    monkeypatch.setattr(ClusterControl, "register_broker", backwards)
    assert "MonotonicBrokerEpoch" in _found("controller-broker-churn", (1, 2))


def test_an_unclean_restart_that_stays_eligible_breaks_no_clean_replica_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        replication_control.ReplicationControl, "handle_unclean_reregistration", lambda *a, **k: None
    )
    assert "NoCleanReplicaLost" in _found("controller-broker-churn", (1, 2, 3))


def test_an_election_that_drops_every_eligible_replica_breaks_no_clean_replica_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ELR never filled: fencing the last ISR member leaves nobody eligible (data loss in waiting).
    monkeypatch.setattr(partition_change, "_target_elr", lambda *args: ((), ()))
    assert "NoCleanReplicaLost" in _found("controller-fencing", (1, 2))


def test_a_restarted_former_leader_taking_itself_for_active_breaks_active_controller_leads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The controller before the fix (tests/unit/controller/test_regressions_from_sim.py): any
    # announcement naming this node leader made it active, even a restarted core's resigned epoch.
    def any_announcement(self: QuorumController, leader: Any) -> None:
        self.leader = leader
        if leader.leader_id == self.node_id:
            if self.active_epoch != leader.epoch:
                self.active_epoch = leader.epoch
                self._needs_activation = True
        elif self.active_epoch is not None:
            self._deactivate(f"leadership moved to {leader.leader_id}")

    monkeypatch.setattr(QuorumController, "handle_leader_change", any_announcement)
    assert "ActiveControllerLeads" in _found("controller-failover", (1,))


def test_an_election_before_an_unclean_registration_in_its_batch_is_judged_by_what_was_known() -> None:
    # Seed 9180: at offset 198 fencing broker 102 made 103 leader (min.insync.replicas 1, so 102
    # left the ISR); 103's registration after an unclean shutdown came at 206, in the same batch.
    # The checker judged the election as if 103's shutdown had been known at 198 (a false
    # NoCleanReplicaLost, found by the 10,000-seed sweep). The run now ends cleanly.
    result = run_seed("controller-crash-restart", 9180)
    assert result["violations"] == []
    assert result["virtual_ms"] == 33_000  # not stopped early
    assert result["controller"]["unclean_registrations"] >= 1
