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
from kraft.controller.partition_change import PartitionChangeResult
from kraft.metadata.partition import PartitionRegistration
from kraft.records.batch import build_value_batch
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


# data-mixed seed 1074: broker 103 loses power while in the ISR, is elected from it before its
# unclean re-registration, is fenced as the last known leader, restarts uncleanly. Kafka's
# last-known-leader rule then elects its empty log; the only full copy (101, killed) is out of the
# ELR because its restart was unclean too.
UNCLEAN_LAST_LEADER = ("data-mixed", 1074)


def test_an_unclean_last_known_leader_is_not_elected_and_the_partition_waits() -> None:
    world = run(*UNCLEAN_LAST_LEADER)
    assert world.violations == []
    assert world.extra["data"]["no_eligible_leader"] == [0, 1]


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
    world = run(*UNCLEAN_LAST_LEADER)
    assert "AckedRecordKept" in {v.invariant for v in world.violations}


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
