"""One partition's registration and the PartitionChangeRecord merge (spec 1.4, 1.6).

Owns the in-image shape of a partition (Kafka's ``PartitionRegistration``) and the one rule that
moves it forward, :meth:`PartitionRegistration.merge`. Pure data: no I/O, no clock, no controller
logic (which leader to pick lives in ``kraft.controller.partition_change``); the wire codec of
the record lives elsewhere.

Invariant (spec 1.6): every merged change bumps the partition epoch by exactly one, and the
leader epoch by one exactly when the change carries a leader (``leader != NO_LEADER_CHANGE``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

from kraft.common.fast_init import speed_up_inits

# Spec 1.4: Leader -1 = leaderless; -2 = "leader unchanged" (the PartitionChangeRecord default).
NO_LEADER = -1
NO_LEADER_CHANGE = -2
# The PartitionChangeRecord default for LeaderRecoveryState: keep the current value.
NO_LEADER_RECOVERY_STATE_CHANGE = -1

_T = TypeVar("_T")


class LeaderRecoveryState(IntEnum):
    """KIP-704: RECOVERING marks a leader chosen by an unclean election until it reports back."""

    RECOVERED = 0
    RECOVERING = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionChange:
    """The content of a PartitionChangeRecord (spec 1.4): ``None``/-2/-1 mean "unchanged"."""

    topic_id: uuid.UUID
    partition_id: int
    isr: tuple[int, ...] | None = None
    leader: int = NO_LEADER_CHANGE
    replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    leader_recovery_state: int = NO_LEADER_RECOVERY_STATE_CHANGE
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    directories: tuple[uuid.UUID, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionRegistration:
    """A partition as the image holds it, created by a PartitionRecord and advanced only by
    :meth:`merge`. ``replicas`` is in preferred order; ``directories`` is aligned with it (empty
    before MV 3.7-IV2). ``elr``/``last_known_elr`` are KIP-966's Eligible Leader Replicas and
    LastKnownElr (spec 5)."""

    replicas: tuple[int, ...]
    directories: tuple[uuid.UUID, ...] = ()
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    leader: int
    leader_recovery_state: int = LeaderRecoveryState.RECOVERED
    leader_epoch: int = 0
    partition_epoch: int = 0

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    @property
    def preferred_leader(self) -> int:
        return self.replicas[0] if self.replicas else NO_LEADER

    @property
    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas or self.adding_replicas)

    @property
    def electable_leaders(self) -> int:
        """KIP-966's "electable leaders" count (spec 5.6): replicas that may still lead cleanly."""
        return len(self.isr) + len(self.elr)

    def merge(self, change: PartitionChange) -> PartitionRegistration:
        """Apply a PartitionChangeRecord exactly as replay does (spec 1.6)."""
        leader, leader_epoch = self.leader, self.leader_epoch
        if change.leader != NO_LEADER_CHANGE:
            # Spec 1.6: a present Leader field always bumps the epoch, even to -1 or to the same
            # id: that is how the controller forces a bump (reassignment, MV < 12 ISR shrink).
            leader, leader_epoch = change.leader, self.leader_epoch + 1
        lrs = self.leader_recovery_state
        if change.leader_recovery_state != NO_LEADER_RECOVERY_STATE_CHANGE:
            lrs = change.leader_recovery_state
        # Every field given, so the constructor directly: 1.3 us a merge against 2.4 through
        # dataclasses.replace, and every node replays one per partition a controlled shutdown moves.
        return PartitionRegistration(
            replicas=_or(change.replicas, self.replicas),
            directories=_or(change.directories, self.directories),
            isr=_or(change.isr, self.isr),
            removing_replicas=_or(change.removing_replicas, self.removing_replicas),
            adding_replicas=_or(change.adding_replicas, self.adding_replicas),
            elr=_or(change.elr, self.elr),
            last_known_elr=_or(change.last_known_elr, self.last_known_elr),
            leader=leader,
            leader_recovery_state=lrs,
            leader_epoch=leader_epoch,
            # Spec 1.6: every record bumps the partition epoch, whatever it changes.
            partition_epoch=self.partition_epoch + 1,
        )


def _or(new: tuple[_T, ...] | None, old: tuple[_T, ...]) -> tuple[_T, ...]:
    return old if new is None else new


# Built for every partition record replayed: see kraft.common.fast_init.
speed_up_inits(PartitionRegistration, PartitionChange)
