"""Leader, ISR and ELR choice for one partition: Kafka's ``PartitionChangeBuilder`` as one pure
function (spec 4.2, 4.4, 4.6, 5.3-5.5), and the per-partition ELR rule of a min.insync.replicas
change (spec 5.3 rule 5).

Must not: do I/O, read a clock, draw random numbers or look at the cluster. Everything it needs
(who may lead, m, whether ELR is on, the metadata.version) comes in as arguments, and what it
decides goes out as a :class:`PartitionChange` that ``PartitionRegistration.merge`` applies.

Invariants of ``partition.merge(change)`` when the input satisfies them (checked by Hypothesis in
the tests): the leader is -1 or in the ISR; ISR and ELR are disjoint and within the replicas;
with ELR enabled, the ELR is empty whenever |ISR| >= m; and a change carries ``leader != -2``
exactly when the leader epoch must move (spec 4.4), because ``merge`` bumps it on that field.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import Enum

from kraft.metadata.partition import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    NO_LEADER_RECOVERY_STATE_CHANGE,
    LeaderRecoveryState,
    PartitionChange,
    PartitionRegistration,
)

# metadata.version feature levels that change this algorithm (spec 1.5).
_MV_LEADER_RECOVERY = 3  # 3.2-IV0: an unclean winner is marked RECOVERING
_MV_NO_BUMP_ON_ISR_SHRINK = 12  # 3.6-IV0: KAFKA-15021 fixed, ISR shrinks stop bumping LE
_MV_DIRECTORIES = 17  # 3.7-IV2: PartitionChangeRecord carries Directories

# DirectoryId.UNASSIGNED: a replica whose log directory the broker has not reported yet.
_UNASSIGNED_DIR = uuid.UUID(int=1)


class Election(Enum):
    """ONLINE keeps the partition led from ISR/ELR; PREFERRED also moves leadership to
    replicas[0] when it is valid; UNCLEAN falls back to any acceptable replica (data loss)."""

    ONLINE = "online"
    PREFERRED = "preferred"
    UNCLEAN = "unclean"


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionChangeResult:
    """What the builder decided.

    ``change`` is None when nothing changes (no record is written). ``elected_leader`` is the
    leader the change installs by election (``NO_LEADER`` when leadership is lost), None when the
    election kept the current leader. ``unclean``: the winner came from neither ISR nor ELR (an
    unclean replica or the last known leader). ``from_elr``: the winner was in the previous ELR
    (Kafka's ElectionFromEligibleLeaderReplicasPerSec, spec 5.6).
    """

    change: PartitionChange | None
    elected_leader: int | None
    unclean: bool
    from_elr: bool


_NO_CHANGE = PartitionChangeResult(change=None, elected_leader=None, unclean=False, from_elr=False)


def build_partition_change(
    partition: PartitionRegistration,
    *,
    topic_id: uuid.UUID,
    partition_id: int,
    is_acceptable_leader: Callable[[int], bool],
    min_isr: int,
    elr_enabled: bool,
    election: Election = Election.ONLINE,
    target_isr: Sequence[int] | None = None,
    target_replicas: Sequence[int] | None = None,
    target_removing_replicas: Sequence[int] | None = None,
    target_adding_replicas: Sequence[int] | None = None,
    target_leader_recovery_state: int | None = None,
    unclean_shutdown_replicas: Collection[int] = (),
    last_known_leader_mode: bool = True,
    metadata_version: int = 25,
    default_directory: Callable[[int], uuid.UUID] | None = None,
) -> PartitionChangeResult:
    """Run spec 4.2 steps 1-9 on ``partition`` and return the record to write, if any.

    Args:
        is_acceptable_leader: may this broker lead (active, directory online; spec 4.1/4.3).
        min_isr: the effective m = min(topic min.insync.replicas, replication factor); clamped
            here to [1, number of replicas] in case the caller's RF is stale.
        elr_enabled: KIP-966 is on (``eligible.leader.replicas.version`` >= 1, spec 5.2).
        target_*: the desired values; None keeps the partition's own.
        unclean_shutdown_replicas: U, brokers that restarted after an unclean shutdown: they
            leave the ELR (and, through ``target_isr``, the ISR) and go to LastKnownElr.
        last_known_leader_mode: Kafka's default LastKnownElr mode (True) or the KIP mode (spec 5.4).
        default_directory: the log directory of a replica the partition did not have before
            (reassignment); None gives DirectoryId.UNASSIGNED as Kafka's tests do.
    """
    p = partition
    isr = tuple(target_isr) if target_isr is not None else p.isr
    replicas = tuple(target_replicas) if target_replicas is not None else p.replicas
    removing = (
        tuple(target_removing_replicas) if target_removing_replicas is not None else p.removing_replicas
    )
    adding = tuple(target_adding_replicas) if target_adding_replicas is not None else p.adding_replicas
    lrs = p.leader_recovery_state if target_leader_recovery_state is None else target_leader_recovery_state
    unclean_shutdown = frozenset(unclean_shutdown_replicas)
    m = max(1, min(min_isr, len(replicas)))

    # Step 1 (spec 4.6): a reassignment completes once every surviving replica is in sync.
    # KIP-966 adds the gate |resulting ISR| >= m, since the removed replicas cannot stay behind
    # as ELR; it is part of ELR, so only with ELR on (Kafka has no gate: PartitionReassignmentReplicas).
    completed = _complete_reassignment(isr, replicas, removing, adding, m if elr_enabled else None)
    if completed is not None:
        isr, replicas = completed
        removing, adding = (), ()

    # Step 2 (spec 4.2, 5.3.1): below m, everyone who was in ISR or ELR and is not in the new ISR
    # holds every committed record (strict min ISR), unless it restarted uncleanly.
    elr, lke = p.elr, p.last_known_elr
    if elr_enabled:
        elr, lke = _target_elr(p, isr, replicas, m, unclean_shutdown)

    # Departure from Kafka (default mode): a last known leader that restarted uncleanly may have
    # lost its unflushed tail, so electing it "as a last resort" would silently drop records that
    # were acknowledged while it led. It is forgotten instead: the partition waits, leaderless, for
    # an ELR member, an operator's unclean election, or unclean recovery. Kafka keeps it (it is a
    # stand-in for unclean recovery there, KAFKA-15584), and the simulator's data-mixed sweep lost
    # acknowledged records through exactly that path.
    default_lke = last_known_leader_mode and elr_enabled
    forget_lke = default_lke and len(p.last_known_elr) == 1 and p.last_known_elr[0] in unclean_shutdown

    # Step 3: elect.
    winner, unclean = _elect(
        p,
        isr=isr,
        elr=elr,
        replicas=replicas,
        election=election,
        is_acceptable_leader=is_acceptable_leader,
        last_known_leader_allowed=default_lke and not forget_lke,
    )
    rec_leader = NO_LEADER_CHANGE
    rec_isr: tuple[int, ...] | None = None
    rec_lrs = NO_LEADER_RECOVERY_STATE_CHANGE
    # Install the winner when leadership changes. Also when the current leader wins again
    # without being in the target ISR (valid only through the ELR, or picked uncleanly): Kafka
    # leaves such a leader outside its ISR; callers never ask for that, but the invariant
    # "leader in ISR" must not rest on it.
    installs = winner != p.leader or (winner != NO_LEADER and winner not in isr)
    if installs:
        rec_leader = winner
        if winner in elr and winner not in isr:
            # Spec 5.3.2: an ELR member that wins becomes the sole ISR member (a clean election).
            isr = (winner,)
            elr = tuple(r for r in elr if r != winner)
            if elr_enabled and len(isr) >= m:
                # Only with m = 1. Spec 5.1: ELR is empty whenever |ISR| >= m (Kafka keeps it).
                elr, lke = (), ()
        if unclean:
            # KIP-704: a leader from outside ISR/ELR may lack committed data; the ISR restarts
            # from it alone and it is RECOVERING until it reports otherwise.
            rec_isr = (winner,)
            if p.leader_recovery_state != LeaderRecoveryState.RECOVERING and (
                metadata_version >= _MV_LEADER_RECOVERY
            ):
                rec_lrs = int(LeaderRecoveryState.RECOVERING)

    # Step 4 (spec 4.4): dropping a replica must bump LE so the removed broker's fetches fence.
    if rec_leader == NO_LEADER_CHANGE and not set(p.replicas) <= set(replicas):
        rec_leader = p.leader

    # Step 5 (spec 5.3.3): an unclean election or disabled ELR voids every eligibility claim.
    if rec_isr is not None or not elr_enabled:
        elr, lke = (), ()
    rec_elr = elr if elr != p.elr else None
    rec_lke: tuple[int, ...] | None = None
    if (not last_known_leader_mode or not elr_enabled) and lke != p.last_known_elr:
        # KIP mode tracks LastKnownElr here. With ELR disabled we also clear it in the default
        # mode (spec 5.2 "next change clears its ELR/LKE"); Kafka's snapshot leaves it behind.
        rec_lke = lke

    # Step 6: with ELR disabled the last ISR member is never removed ("last replica standing").
    if rec_isr is None and isr != p.isr and (isr or elr_enabled):
        rec_isr = isr

    # Step 7 (KAFKA-15021): before MV 3.6-IV0 brokers needed an LE bump on every ISR shrink.
    if (
        metadata_version < _MV_NO_BUMP_ON_ISR_SHRINK
        and rec_leader == NO_LEADER_CHANGE
        and rec_isr is not None
        and not set(p.isr) <= set(rec_isr)
    ):
        rec_leader = p.leader

    # Step 8 (spec 5.4, default mode): LastKnownElr holds the last leader while leaderless.
    if default_lke:
        if rec_isr == () and p.last_known_elr != (p.leader,):
            # Guard: a partition already leaderless (ISR kept while ELR was off) has no last
            # leader to remember; Kafka would write [-1]. A leader that restarted uncleanly is
            # not remembered either (see forget_lke above).
            if p.leader != NO_LEADER and p.leader not in unclean_shutdown:
                rec_lke = (p.leader,)
            elif p.last_known_elr:
                rec_lke = ()
        elif (
            (rec_leader >= 0 or (p.leader != NO_LEADER and rec_leader != NO_LEADER)) and p.last_known_elr
        ) or forget_lke:
            rec_lke = ()

    # Step 9: assignment fields and the recovery state, each only if it changed.
    rec_replicas: tuple[int, ...] | None = None
    rec_dirs: tuple[uuid.UUID, ...] | None = None
    if replicas and replicas != p.replicas:
        rec_replicas = replicas
        if metadata_version >= _MV_DIRECTORIES:
            dirs = _directories(p, replicas, default_directory)
            rec_dirs = dirs if dirs != p.directories else None
    rec_removing = removing if removing != p.removing_replicas else None
    rec_adding = adding if adding != p.adding_replicas else None
    if lrs != p.leader_recovery_state:
        rec_lrs = lrs

    change = PartitionChange(
        topic_id=topic_id,
        partition_id=partition_id,
        isr=rec_isr,
        leader=rec_leader,
        replicas=rec_replicas,
        removing_replicas=rec_removing,
        adding_replicas=rec_adding,
        leader_recovery_state=rec_lrs,
        elr=rec_elr,
        last_known_elr=rec_lke,
        directories=rec_dirs,
    )
    if change == PartitionChange(topic_id=topic_id, partition_id=partition_id):
        return _NO_CHANGE
    return PartitionChangeResult(
        change=change,
        elected_leader=winner if installs else None,
        unclean=installs and unclean,
        from_elr=installs and winner in p.elr,
    )


def elr_cleared_by_min_isr_change(
    partition: PartitionRegistration,
    *,
    topic_id: uuid.UUID,
    partition_id: int,
    min_isr: int,
) -> PartitionChange | None:
    """Spec 5.3 rule 5 (revised), KIP-966: "when updating the config min.insync.replicas, if the
    new min ISR <= current ISR, the ELR will be removed" -- per partition.

    Where the new effective m is at most |ISR|, the ISR alone satisfies min ISR, so rule 3 applies
    and the change empties ELR and LastKnownElr (PE + 1, no leader-epoch bump: ``leader`` stays
    unchanged). Where the ISR is still below m, ELR and LastKnownElr are kept: they are the
    replicas that hold every committed record, and a leaderless partition elects from them.
    Kafka 4.0+ instead clears every partition of the topic (ClearElrRecord), which can leave a
    leaderless partition with no eligible replica at all.

    Args:
        min_isr: the new min.insync.replicas as resolved for the topic; clamped here to
            [1, number of replicas] like ``build_partition_change`` (spec 4.1).

    Returns:
        The change to write, or None when there is nothing to clear or the ISR is below m.
    """
    m = max(1, min(min_isr, len(partition.replicas)))
    if len(partition.isr) < m or not (partition.elr or partition.last_known_elr):
        return None
    return PartitionChange(topic_id=topic_id, partition_id=partition_id, elr=(), last_known_elr=())


def _complete_reassignment(
    isr: tuple[int, ...],
    replicas: tuple[int, ...],
    removing: tuple[int, ...],
    adding: tuple[int, ...],
    min_isr_gate: int | None,
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(ISR, replicas) after completing the reassignment, or None if it cannot complete yet."""
    if not removing and not adding:
        return None
    if removing:
        gone = set(removing)
        isr = tuple(r for r in isr if r not in gone)
        replicas = tuple(r for r in replicas if r not in gone)
        if not isr or not replicas:
            return None
    if not set(replicas) <= set(isr):
        return None
    if min_isr_gate is not None and len(isr) < min_isr_gate:
        return None
    return isr, replicas


def _target_elr(
    p: PartitionRegistration,
    isr: tuple[int, ...],
    replicas: tuple[int, ...],
    m: int,
    unclean_shutdown: frozenset[int],
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Spec 4.2 step 2: the target (ELR, LastKnownElr), both ascending."""
    if len(isr) >= m:
        return (), ()
    # Spec 4.6 / KIP-966: ELR stays within the final replicas when a reassignment drops some.
    on_partition = set(replicas)
    in_isr = set(isr)
    candidates = (set(p.elr) | set(p.isr)) & on_partition
    elr = tuple(sorted(candidates - in_isr - unclean_shutdown))
    lke = tuple(sorted(((candidates | set(p.last_known_elr)) & on_partition) - in_isr - set(elr)))
    return elr, lke


def _elect(
    p: PartitionRegistration,
    *,
    isr: tuple[int, ...],
    elr: tuple[int, ...],
    replicas: tuple[int, ...],
    election: Election,
    is_acceptable_leader: Callable[[int], bool],
    last_known_leader_allowed: bool,
) -> tuple[int, bool]:
    """Spec 4.2 step 3 / 5.5: (winner or NO_LEADER, whether the choice was unclean)."""

    def valid(r: int) -> bool:
        # An ELR member may lead only while the ISR is empty (spec 5.5 step 3).
        return (r in isr or (not isr and r in elr)) and is_acceptable_leader(r)

    def last_known_leader() -> int | None:
        # Spec 5.5 step 4: never while an ELR member may still come back. KAFKA-19522: the
        # snapshot skipped the acceptable check and could elect a fenced broker.
        if not last_known_leader_allowed or isr or elr or len(p.last_known_elr) != 1:
            return None
        candidate = p.last_known_elr[0]
        if candidate in replicas and is_acceptable_leader(candidate):
            return candidate
        return None

    if election is Election.PREFERRED:
        if replicas and valid(replicas[0]):
            return replicas[0], False
        if valid(p.leader):
            return p.leader, False
        ordered = replicas[1:]
    else:
        if valid(p.leader):
            return p.leader, False
        ordered = replicas
    for r in ordered:
        if valid(r):
            return r, False
    last_known = last_known_leader()
    if last_known is not None:
        return last_known, True
    if election is Election.UNCLEAN:
        for r in replicas:
            if is_acceptable_leader(r):
                return r, True
    return NO_LEADER, False


def _directories(
    p: PartitionRegistration,
    replicas: tuple[int, ...],
    default_directory: Callable[[int], uuid.UUID] | None,
) -> tuple[uuid.UUID, ...]:
    """Each replica keeps its directory across a reassignment; a new one gets the default."""
    known = dict(zip(p.replicas, p.directories)) if len(p.directories) == len(p.replicas) else {}
    out: list[uuid.UUID] = []
    for r in replicas:
        if r in known:
            out.append(known[r])
        else:
            out.append(default_directory(r) if default_directory is not None else _UNASSIGNED_DIR)
    return tuple(out)
