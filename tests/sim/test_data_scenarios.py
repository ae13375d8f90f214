"""The data plane in the simulator: every ``data-*`` proof scenario on a CI seed, KIP-966's ELR pair,
and planted bugs that each invariant must catch.

The long sweeps (hundreds or thousands of seeds per scenario) run outside the suite:
``kraft sim sweep --scenarios data`` and ``benchmarks/elr_value.py``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from kraft.broker import partition as partition_module
from kraft.controller import replication_control as replication_module
from kraft.controller import unclean_recovery
from kraft.controller.partition_change import PartitionChangeResult
from kraft.metadata.partition import PartitionRegistration
from kraft.records.batch import build_value_batch
from kraft.sim import data_scenarios
from kraft.sim.controller_world import SIM_CONTROLLER_CONFIG
from kraft.sim.data import DataWorld
from kraft.sim.data_scenarios import DATA_PROOF_SCENARIOS, DATA_SCENARIOS
from kraft.sim.scenarios import build_world, scenario_group
from kraft.sim.world import World

pytestmark = pytest.mark.xdist_group("data-scenarios")


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def run(name: str, seed: int) -> World:
    world = build_world(name, seed)
    world.run()
    return world


def test_the_data_group_names_every_data_scenario_and_no_controller_one() -> None:
    assert scenario_group("data") == list(DATA_SCENARIOS)
    assert len(DATA_PROOF_SCENARIOS) >= 8
    assert not any(n.startswith("data-") for n in scenario_group("controller"))


@pytest.mark.parametrize("name", DATA_PROOF_SCENARIOS)
def test_data_scenario_ci_seed_keeps_every_acknowledged_record(name: str) -> None:
    world = run(name, 1)
    assert world.violations == []
    assert isinstance(world, DataWorld)
    figures = world.extra["data"]
    assert figures["acked_records"] > 100, figures
    assert figures["lost_records"] == 0
    # Jepsen's "unseen" check: the consumer read every acknowledged record, with its value.
    checker = world.data_checker
    for partition, acked in checker.acked_by_partition.items():
        read = checker.read_by_partition.get(partition, {})
        assert {o: read.get(o) for o in acked} == acked, f"partition {partition}"


def test_kip_966_last_replica_standing_loses_nothing_with_elr_and_loses_acked_records_without() -> None:
    with_elr = run("data-last-replica-standing", 1)
    assert with_elr.violations == []
    without = run("data-last-replica-standing-no-elr", 1)
    kinds = {v.invariant for v in without.violations}
    assert kinds == {"AckedRecordKept"}, kinds


# Partitions that end with nobody eligible (ISR, ELR and LastKnownElr empty: every replica that held
# the committed records restarted uncleanly, and kraft never elects an unclean last known leader).
# data-mixed seed 1131: a replica still holds every acknowledged record; Kafka's last-known-leader
# rule elects one with an empty log instead. Unclean recovery (KIP-966 part 2) elects the former.
NOBODY_ELIGIBLE = ("data-mixed", 1131)
# data-mixed seed 1074: partition 1 as above. Partition 0's last acknowledged records were on 102 and
# 103 only (101 had left the ISR) and both lost power before either could pass them on: no copy is
# left anywhere. Recovery elects 101, the most complete log there is.
EVERY_COPY_LOST = ("data-mixed", 1074)


def _recovery_off(monkeypatch: pytest.MonkeyPatch) -> None:
    config = dataclasses.replace(SIM_CONTROLLER_CONFIG, unclean_recovery_manager_enabled=False)
    monkeypatch.setattr(data_scenarios, "SIM_CONTROLLER_CONFIG", config)


def test_unclean_recovery_gives_a_partition_nobody_could_lead_its_most_complete_log() -> None:
    world = run(*NOBODY_ELIGIBLE)
    assert world.violations == []
    assert isinstance(world, DataWorld)
    assert world.extra["controller"]["unclean_recovery_elections"] == 2
    assert all(leader >= 0 for leader in world.leaders_now().values()), world.leaders_now()
    assert world.extra["data"]["lost_records"] == 0
    assert world.extra["data"]["no_eligible_leader"] == []


def test_without_unclean_recovery_the_partitions_wait_for_an_operator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _recovery_off(monkeypatch)
    world = run(*NOBODY_ELIGIBLE)
    assert world.violations == []  # excused: nobody eligible, recovery off
    assert isinstance(world, DataWorld)
    assert world.extra["data"]["no_eligible_leader"] == [0, 1]
    assert world.leaders_now() == {0: -1, 1: -1}
    assert world.extra["controller"]["unclean_recovery_elections"] == 0


def test_with_recovery_on_a_partition_left_without_a_leader_is_not_excused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Planted: a recovery manager that never decides. The waiting is no longer KIP-966's accepted
    # unavailability, so DataAvailable must report it.
    monkeypatch.setattr(unclean_recovery.UncleanRecoveryManager, "poll", lambda self, *a, **k: ([], None))
    world = run(*NOBODY_ELIGIBLE)
    assert [v.invariant for v in world.violations] == ["DataAvailable"]


def test_when_every_copy_of_acknowledged_records_lost_power_recovery_elects_what_is_left() -> None:
    # Not hidden (the simulator reports it as AckedRecordKept), and kept here as what happens: the
    # records lost are exactly those no replica held any more when the leader was elected.
    world = build_world(*EVERY_COPY_LOST)
    world.stop_on_violation = False
    world.run()
    assert isinstance(world, DataWorld)
    assert world.extra["controller"]["unclean_recovery_elections"] == 2
    assert all(leader >= 0 for leader in world.leaders_now().values()), world.leaders_now()
    lost = [v.detail for v in world.violations if v.invariant == "AckedRecordKept"]
    assert lost and all("partition 0 " in d and "in no replica's log any more" in d for d in lost), lost[:3]
    others = {v.invariant for v in world.violations} - {"AckedRecordKept", "OffsetsStable"}
    assert others == set()
    assert all("partition 0 " in v.detail for v in world.violations)  # partition 1 lost nothing


def test_kafkas_last_known_leader_rule_loses_acknowledged_records(monkeypatch: pytest.MonkeyPatch) -> None:
    # Planted: Kafka's rule (an unclean restart does not make the controller forget the last leader).
    real = replication_module.build_partition_change

    def kafka_rule(partition: PartitionRegistration, **kwargs: Any) -> PartitionChangeResult:
        result = real(partition, **kwargs)
        unclean = tuple(kwargs.get("unclean_shutdown_replicas", ()))
        forgot = partition.last_known_elr and partition.last_known_elr[0] in unclean
        if forgot and result.change is not None and result.change.last_known_elr == ():
            return dataclasses.replace(result, change=dataclasses.replace(result.change, last_known_elr=None))
        return result

    monkeypatch.setattr(replication_module, "build_partition_change", kafka_rule)
    world = run(*NOBODY_ELIGIBLE)
    lost = [v.detail for v in world.violations if v.invariant == "AckedRecordKept"]
    # The last known leader's log was empty; other replicas still held the records.
    assert lost and "still in the log of broker(s)" in lost[0], lost


def test_a_high_watermark_that_ignores_min_isr_loses_acknowledged_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Planted: KIP-966 part 1 off (the high watermark moves with the ISR below min ISR).
    monkeypatch.setattr(partition_module.Partition, "under_min_isr", lambda self: False)
    world = run("data-last-replica-standing", 1)
    assert "AckedRecordKept" in {v.invariant for v in world.violations}


def test_a_high_watermark_that_goes_backward_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def follows_the_slowest(self: partition_module.Partition) -> bool:
        if not self.is_leader:
            return False
        hw = self.log.log_end_offset
        for r in self.maximal_isr():
            state = self.followers.get(r)
            if r != self.node_id and state is not None and state.log_end_offset >= 0:
                hw = min(hw, state.log_end_offset)
        return self.log.set_high_watermark_after_truncation(hw)

    monkeypatch.setattr(partition_module.Partition, "maybe_advance_high_watermark", follows_the_slowest)
    world = run("data-power-loss", 1)
    assert "HighWatermarkMonotonic" in {v.invariant for v in world.violations}


def _checker_world() -> DataWorld:
    world = build_world("data-steady", 1)
    assert isinstance(world, DataWorld)
    return world


def test_the_client_side_invariants_catch_what_they_name() -> None:
    world = _checker_world()
    checker, client = world.data_checker, world.client
    checker.acked(0, 0, [b"a", b"b"])
    # Read past the answer's high watermark, and a value that differs from the acknowledged one.
    checker.consumed(
        0,
        0,
        1,
        build_value_batch([b"a", b"x"], base_offset=0, partition_leader_epoch=0, timestamp_ms=0),
        client,
    )
    kinds = [v.invariant for v in world.violations]
    assert kinds == ["ConsumerBelowHighWatermark", "OffsetsStable"], kinds
    # A gap in what a consumer is handed.
    checker.consumed(
        1, 0, 10, build_value_batch([b"c"], base_offset=3, partition_leader_epoch=0, timestamp_ms=0), client
    )
    assert world.violations[-1].invariant == "ConsumerInOrder"
    # One offset acknowledged with a value other than the one read there before.
    checker.consumed(
        2, 0, 10, build_value_batch([b"r"], base_offset=0, partition_leader_epoch=0, timestamp_ms=0), client
    )
    checker.acked(2, 0, [b"s"])
    assert world.violations[-1].invariant == "OffsetsStable"
