"""PartitionRegistration.merge follows the PartitionChangeRecord replay rules of spec 1.6."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kraft.metadata.partition import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    LeaderRecoveryState,
    PartitionChange,
    PartitionRegistration,
)

TOPIC = uuid.UUID(int=0xF00)
DIR_A, DIR_B, DIR_C = (uuid.UUID(int=i) for i in (0xA, 0xB, 0xC))

BASE = PartitionRegistration(
    replicas=(1, 2, 3),
    directories=(DIR_A, DIR_B, DIR_C),
    isr=(1, 2),
    elr=(3,),
    last_known_elr=(),
    leader=1,
    leader_recovery_state=LeaderRecoveryState.RECOVERED,
    leader_epoch=7,
    partition_epoch=11,
)


def change(**fields: Any) -> PartitionChange:
    return PartitionChange(topic_id=TOPIC, partition_id=0, **fields)


def test_an_empty_change_bumps_only_the_partition_epoch() -> None:
    merged = BASE.merge(change())
    assert merged.partition_epoch == BASE.partition_epoch + 1
    assert merged.leader_epoch == BASE.leader_epoch
    assert merged.leader == BASE.leader
    assert (merged.isr, merged.elr, merged.replicas, merged.directories) == (
        BASE.isr,
        BASE.elr,
        BASE.replicas,
        BASE.directories,
    )


@pytest.mark.parametrize(
    ("leader", "expected_leader"),
    [(2, 2), (BASE.leader, BASE.leader), (NO_LEADER, NO_LEADER)],
    ids=["new-leader", "same-leader", "leaderless"],
)
def test_a_present_leader_field_bumps_the_leader_epoch_even_if_unchanged_or_minus_one(
    leader: int, expected_leader: int
) -> None:
    merged = BASE.merge(change(leader=leader))
    assert merged.leader == expected_leader
    assert merged.leader_epoch == BASE.leader_epoch + 1
    assert merged.partition_epoch == BASE.partition_epoch + 1


def test_leader_minus_two_keeps_leader_and_leader_epoch() -> None:
    merged = BASE.merge(change(leader=NO_LEADER_CHANGE, isr=(1,)))
    assert (merged.leader, merged.leader_epoch, merged.isr) == (1, BASE.leader_epoch, (1,))


def test_leader_recovery_state_minus_one_keeps_and_other_values_replace() -> None:
    recovering = BASE.merge(change(leader_recovery_state=LeaderRecoveryState.RECOVERING))
    assert recovering.leader_recovery_state == LeaderRecoveryState.RECOVERING
    assert recovering.merge(change(leader_recovery_state=-1)).leader_recovery_state == 1
    assert recovering.merge(change(leader_recovery_state=0)).leader_recovery_state == 0
    # The default of the field is "no change".
    assert recovering.merge(change()).leader_recovery_state == 1


def test_none_fields_keep_and_present_fields_replace_including_empty_lists() -> None:
    merged = BASE.merge(
        change(
            isr=(),
            elr=(1, 2, 3),
            last_known_elr=(1,),
            replicas=(3, 2, 1),
            removing_replicas=(9,),
            adding_replicas=(8,),
            directories=(DIR_C, DIR_B, DIR_A),
        )
    )
    assert merged.isr == ()
    assert merged.elr == (1, 2, 3)
    assert merged.last_known_elr == (1,)
    assert merged.replicas == (3, 2, 1)
    assert merged.removing_replicas == (9,)
    assert merged.adding_replicas == (8,)
    assert merged.directories == (DIR_C, DIR_B, DIR_A)
    cleared = merged.merge(change(elr=(), last_known_elr=(), removing_replicas=(), adding_replicas=()))
    assert (cleared.elr, cleared.last_known_elr, cleared.removing_replicas, cleared.adding_replicas) == (
        (),
        (),
        (),
        (),
    )
    assert cleared.isr == () and cleared.replicas == (3, 2, 1)


def test_epochs_accumulate_over_several_merges() -> None:
    state = BASE
    for c in (change(isr=(1,)), change(leader=2), change(elr=()), change(leader=NO_LEADER)):
        state = state.merge(c)
    assert state.partition_epoch == BASE.partition_epoch + 4
    assert state.leader_epoch == BASE.leader_epoch + 2


def test_helpers() -> None:
    assert BASE.has_leader and BASE.preferred_leader == 1 and not BASE.is_reassigning
    assert BASE.electable_leaders == 3
    leaderless = BASE.merge(change(leader=NO_LEADER, isr=(), elr=(2, 3)))
    assert not leaderless.has_leader and leaderless.electable_leaders == 2
    assert leaderless.preferred_leader == 1
    assert BASE.merge(change(adding_replicas=(4,))).is_reassigning
    assert BASE.merge(change(removing_replicas=(3,))).is_reassigning
    assert PartitionRegistration(replicas=(), isr=(), leader=NO_LEADER).preferred_leader == NO_LEADER


def test_registration_and_change_are_frozen() -> None:
    with pytest.raises(AttributeError):
        BASE.leader = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        change().leader = 2  # type: ignore[misc]
