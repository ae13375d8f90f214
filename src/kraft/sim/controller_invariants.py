"""Named invariants of the quorum controller, checked after every simulated event.

``ControllerChecker`` extends the raft checker (``kraft.sim.invariants``): every raft invariant
still holds for the controllers' raft cores, and these are added. Two sources feed them:

* **The reference chain.** A recorder listener on every controller's raft core hands each committed
  batch to the checker (the first copy of each offset is kept; the raft checker already proves all
  copies equal). A fresh ``MetadataLoader`` that never loads a snapshot and never adopts an image
  replays them from offset 0, *record by record*: it is the committed log replayed from scratch.
  Transitions are judged per record (one raft batch may hold several requests' records, so
  consecutive batch images can hide a step); states per batch (a batch is atomic: a ConfigRecord
  and its ClearElrRecord, say, come together).
* **Every controller's published images** (``QuorumController.on_commit``: once per committed batch
  and per loaded snapshot), judged after the poll that published them.

Invariants (spec sections 2, 4, 5; 5.1 for ELR):

* **LeaderInIsr** - a partition's leader is -1 or in its ISR (reference batches, every
  controller image).
* **IsrElrDisjoint** - ISR and ELR are disjoint and both within the replicas.
* **ElrOnlyBelowMinIsr** - with ELR enabled, the ELR is empty whenever |ISR| >= the effective min
  ISR (min(topic ``min.insync.replicas`` -> cluster default -> 1, replication factor)).
* **LeaderFromIsrOrElr** - with unclean election off, a new leader (a record changing the leader to
  a broker) comes from the partition's ISR or ELR just before that record. Two exceptions, both
  unclean (LRS = RECOVERING, ISR = [leader]): spec 5.5 step 4, the last-known-leader election, only
  when ISR and ELR were both empty and the winner is the LastKnownElr entry; and unclean recovery
  (KIP-966 part 2), only when the controllers run it and nobody was eligible for its strategy.
* **CommittedImageAgreement** - every image a controller publishes at offset N equals the
  reference image at N (``image_equal``; registration offsets ignored once the controller loaded a
  snapshot, since a snapshot cannot carry them), and the reference replays (a record that does not
  replay is a violation). A deeper check, every ``deep_every`` events on one controller in turn,
  before every controller crash and for every controller at the end of the run: the controller's
  image equals the one rebuilt from its own latest snapshot plus its own log after it (from its log
  start when it has no snapshot).
* **MonotonicBrokerEpoch** - a broker id's epoch never decreases in a controller's successive
  images (per controller incarnation) nor along the reference chain.
* **ActiveControllerLeads** - a controller that takes itself for active (after any poll) has a core
  leading that epoch, or resigned from leading it in this incarnation (it hears of the next leader
  later): never a core that restarted resigned in an epoch it led before the restart.
* **NoCleanReplicaLost** - with unclean election off, an election (a record changing the leader)
  never leaves the partition's ISR u ELR without any broker that was in it before, had no
  unclean shutdown since it joined, and so held every committed record - when there was such a
  broker. "Unclean shutdown" is the ground truth of the simulated brokers (a start after a crash),
  as the controller learns it: from the commit of that incarnation's registration. A batch is judged
  at its end, so that the partition changes of an unclean registration, which precede its record,
  see it; an election earlier in the batch that keeps the broker is not one of them, and counts it
  as clean. Also: once that registration commits, the broker must have left every ISR and ELR it was
  in (spec 2.5).

Figures (``controller`` in the run's JSON): partition elections, ELR elections, last-known-leader
elections, unclean recovery elections, fenced and unfenced brokers, registrations, topics,
snapshots, deep checks.
"""

from __future__ import annotations

import bisect
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kraft.common.errors import KraftError
from kraft.metadata.image import MetadataImage, MetadataLoader, TopicImage, image_differences, image_equal
from kraft.metadata.partition import NO_LEADER, LeaderRecoveryState, PartitionRegistration
from kraft.raft.listener import CommittedBatch, SnapshotReader
from kraft.records.batch import iter_batches
from kraft.sim.invariants import InvariantChecker
from kraft.sim.world import Observed, SimNode, role_name

if TYPE_CHECKING:
    from kraft.node.node import Node
    from kraft.sim.world import World

_TOPIC = 2
_BROKER = 4
_READ_ALL = 1 << 40
ELR_FEATURE = "eligible.leader.replicas.version"
AFTER_UNCLEAN_STOP = "unclean"  # kraft.sim.brokers.AFTER_UNCLEAN_STOP (not imported: no cycle)


@dataclass(slots=True)
class ControllerFigures:
    """What the controllers did, counted along the reference chain (and by the controllers)."""

    committed_offset: int = -1
    partition_elections: int = 0  # records giving a partition a new leader (not creations)
    elr_elections: int = 0  # ... whose winner was in the ELR and not the ISR
    last_known_leader_elections: int = 0  # ... by spec 5.5 step 4 (RECOVERING)
    unclean_recovery_elections: int = 0  # ... by unclean recovery (KIP-966 part 2, RECOVERING)
    leaderless_transitions: int = 0  # records leaving a partition without a leader
    fenced_brokers: int = 0  # unfenced -> fenced, same registration
    unfenced_brokers: int = 0
    controlled_shutdowns: int = 0  # entries into InControlledShutdown
    registrations: int = 0  # new broker epochs
    unclean_registrations: int = 0
    topics_created: int = 0
    topics_deleted: int = 0
    max_elr_size: int = 0
    partitions_with_elr: int = 0  # records leaving a partition with a non-empty ELR
    activations: int = 0  # a controller became active
    snapshots_written: int = 0
    snapshot_loads: int = 0
    image_checks: int = 0  # controller images compared with the reference
    deep_checks: int = 0  # snapshot + log rebuilds compared


@dataclass(slots=True)
class _ControllerMemory:
    """One controller incarnation, as the checker follows it."""

    node_id: int
    controller: Any = None
    pending: list[MetadataImage] = field(default_factory=list)  # published, not yet checked
    last_image: MetadataImage | None = None
    delivered_to: int = 0  # the next offset the node's listeners will be handed
    loaded_snapshot: bool = False
    max_epoch: dict[int, int] = field(default_factory=dict)
    snapshots_written: int = 0
    activations: int = 0
    led_epoch: int | None = None  # the epoch this incarnation's core was last seen leading


class _Recorder:
    """A second listener on a controller's raft core: hands every committed batch to the checker."""

    def __init__(self, checker: ControllerChecker, memory: _ControllerMemory) -> None:
        self._checker = checker
        self._memory = memory

    def handle_commit(self, batch: CommittedBatch) -> None:
        self._checker.record_batch(batch)
        self._memory.delivered_to = batch.last_offset + 1

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self._memory.loaded_snapshot = True
        self._memory.delivered_to = int(reader.snapshot_id.offset)
        self._checker.cfigures.snapshot_loads += 1

    def handle_leader_change(self, leader: Any) -> None:
        pass


@dataclass(slots=True)
class _Election:
    topic_id: uuid.UUID
    partition_id: int
    offset: int
    before: tuple[tuple[int, int], ...]  # (broker, offset it joined ISR u ELR) before the record
    after: frozenset[int]  # ISR u ELR right after the record
    leader_before: int
    leader_after: int


def effective_min_isr(image: MetadataImage, topic: str, replication_factor: int) -> int:
    """min(topic ``min.insync.replicas`` -> cluster default -> 1, RF), at least 1 (spec 4.1)."""
    configs = image.configs
    value = configs.get((_TOPIC, topic), {}).get("min.insync.replicas")
    if value is None:
        value = configs.get((_BROKER, ""), {}).get("min.insync.replicas")
    m = int(value) if value is not None else 1
    return max(1, min(m, replication_factor))


def unclean_election_enabled(image: MetadataImage, topic: str) -> bool:
    configs = image.configs
    value = configs.get((_TOPIC, topic), {}).get("unclean.leader.election.enable")
    if value is None:
        value = configs.get((_BROKER, ""), {}).get("unclean.leader.election.enable")
    return value is not None and value.strip().lower() == "true"


def _changed_partitions(
    before: MetadataImage | None, after: MetadataImage
) -> Iterator[tuple[TopicImage, int, PartitionRegistration, PartitionRegistration | None]]:
    """(topic, partition id, partition, its previous registration) for every partition of ``after``
    that is not the very object ``before`` held (images share unchanged structure)."""
    every = before is None or before.configs is not after.configs or before.features is not after.features
    old_topics = before.topics_by_id if before is not None else {}
    for topic_id, topic in after.topics_by_id.items():
        old = old_topics.get(topic_id)
        if old is topic and not every:
            continue
        old_parts = old.partitions if old is not None else {}
        for pid, part in topic.partitions.items():
            previous = old_parts.get(pid)
            if previous is part and not every:
                continue
            yield topic, pid, part, previous


class ControllerChecker(InvariantChecker):
    """The raft checker plus the controller invariants (module docstring)."""

    def __init__(self, world: World, *, deep_every: int = 4000) -> None:
        super().__init__(world)
        self.cfigures = ControllerFigures()
        self.deep_every = deep_every
        self._controllers: dict[int, _ControllerMemory] = {}
        self._batches: dict[int, CommittedBatch] = {}
        self._reference = MetadataLoader()
        self._reference_next = 0
        self._reference_failed = False
        self._reference_offsets: list[int] = []
        self._reference_images: list[MetadataImage] = []
        self._reference_max_epoch: dict[int, int] = {}
        self._joined: dict[tuple[uuid.UUID, int, int], int] = {}
        self._unclean_at: dict[int, int] = {}
        self._next_deep_at = deep_every
        self._deep_turn = 0

    # -- wiring ----------------------------------------------------------------------------------

    def attach_controller(self, node: SimNode, process: Node) -> None:
        """Follow a freshly built controller incarnation (called by the node factory)."""
        controller = process.controller
        assert controller is not None
        memory = _ControllerMemory(node.node_id, controller)
        self._controllers[node.node_id] = memory
        controller.on_commit = memory.pending.append
        process.raft.register(_Recorder(self, memory))

    def record_batch(self, batch: CommittedBatch) -> None:
        if batch.base_offset >= self._reference_next:
            self._batches.setdefault(batch.base_offset, batch)

    def node_stopped(self, node: SimNode) -> None:
        super().node_stopped(node)
        memory = self._controllers.pop(node.node_id, None)
        if memory is not None:
            self._collect(memory)

    def before_crash(self, node: SimNode) -> None:
        """A controller is about to crash: check it against its own snapshot and log first."""
        if node.up and node.node_id in self._controllers:
            self._settle(node)
            self._deep_check(node)

    # -- the per-event pass ----------------------------------------------------------------------

    def after_event(
        self, touched: SimNode | Sequence[SimNode] | None = None, *, observed: Observed | None = None
    ) -> None:
        super().after_event(touched, observed=observed)
        if touched is None:
            scope: Sequence[SimNode] = list(self.world.nodes.values())
        elif isinstance(touched, SimNode):
            scope = (touched,)
        else:
            scope = touched
        if not scope:
            return  # a delivery, an actor's step: no controller changed
        self._advance_reference()
        for node in scope:
            if node.up and node.node_id in self._controllers:
                self._settle(node)
        if self.world.events >= self._next_deep_at:
            up = [n for n in self.world.nodes.values() if n.up and n.node_id in self._controllers]
            if up:
                self._next_deep_at = self.world.events + self.deep_every
                node = up[self._deep_turn % len(up)]
                self._deep_turn += 1
                self._deep_check(node)

    def at_end(self) -> None:
        super().at_end()
        self._advance_reference()
        for node in self.world.nodes.values():
            if node.up and node.node_id in self._controllers:
                self._settle(node)
                self._deep_check(node)
        for memory in self._controllers.values():
            if memory.pending:
                self.world.report(
                    "CommittedImageAgreement",
                    f"controller {memory.node_id} published an image at offset "
                    f"{memory.pending[0].provenance.last_offset} that the committed log never reached "
                    f"(replayed to {self._reference_next})",
                )
            self._collect(memory)
        self.cfigures.committed_offset = self._reference.image.provenance.last_offset
        self.world.extra["controller"] = self.controller_figures()

    def controller_figures(self) -> dict[str, Any]:
        figures = asdict(self.cfigures)
        brokers = getattr(self.world, "brokers", {})
        figures["broker_restarts_clean"] = sum(b.bstats.clean_stops for b in brokers.values())
        figures["broker_restarts_unclean"] = sum(b.bstats.unclean_stops for b in brokers.values())
        figures["broker_controlled_shutdowns_done"] = sum(
            b.bstats.controlled_shutdowns for b in brokers.values()
        )
        figures["broker_shutdown_timeouts"] = sum(b.bstats.shutdown_timeouts for b in brokers.values())
        figures["followers_lagged"] = sum(b.bstats.followers_lagged for b in brokers.values())
        figures["alter_partitions"] = sum(b.alter_partitions for b in brokers.values())
        figures["brokers"] = len(brokers)
        admin = getattr(self.world, "admin", None)
        if admin is not None:
            figures["admin_min_isr_changes"] = admin.astats.min_isr_changes
            figures["admin_via_broker"] = admin.astats.via_broker
            figures["admin_timeouts"] = admin.stats.timeouts
        return figures

    def _collect(self, memory: _ControllerMemory) -> None:
        controller = memory.controller
        if controller is None:
            return
        self.cfigures.snapshots_written += controller.metrics.snapshots_written - memory.snapshots_written
        self.cfigures.activations += controller.metrics.new_active_controllers - memory.activations
        memory.snapshots_written = controller.metrics.snapshots_written
        memory.activations = controller.metrics.new_active_controllers

    # -- the reference chain ---------------------------------------------------------------------

    def _advance_reference(self) -> None:
        batches = self._batches
        while not self._reference_failed:
            batch = batches.pop(self._reference_next, None)
            if batch is None:
                return
            self._ingest(batch)
            self._reference_next = batch.last_offset + 1

    def _ingest(self, batch: CommittedBatch) -> None:
        loader = self._reference
        before = loader.image
        try:
            if batch.is_control or not batch.records:
                loader.handle_control_batch(batch.last_offset, batch.epoch, batch.append_timestamp_ms)
            else:
                elections: list[_Election] = []
                outsiders: list[tuple[str, int, int, PartitionRegistration, PartitionRegistration]] = []
                for i, raw in enumerate(batch.records):
                    previous = loader.image
                    offset = batch.base_offset + i
                    loader.handle_batch(offset, batch.epoch, batch.append_timestamp_ms, [raw])
                    if loader.image is not previous:
                        self._transition(previous, loader.image, offset, elections, outsiders)
                self._batch_done(before, loader.image, elections, outsiders)
        except KraftError as e:
            self._reference_failed = True
            self.world.report(
                "CommittedImageAgreement",
                f"the committed log does not replay from scratch at batch {batch.base_offset}: {e}",
            )
            return
        image = loader.image
        if not self._reference_images or self._reference_images[-1] is not image:
            self._reference_offsets.append(image.provenance.last_offset)
            self._reference_images.append(image)

    def _transition(
        self,
        before: MetadataImage,
        after: MetadataImage,
        offset: int,
        elections: list[_Election],
        outsiders: list[tuple[str, int, int, PartitionRegistration, PartitionRegistration]],
    ) -> None:
        """One record's change along the reference chain: the elections, and what
        LeaderFromIsrOrElr and NoCleanReplicaLost judge at the end of the batch."""
        figures = self.cfigures
        joined = self._joined
        if before.topics_by_id is not after.topics_by_id:
            figures.topics_deleted += len(before.topics_by_id.keys() - after.topics_by_id.keys())
            figures.topics_created += len(after.topics_by_id.keys() - before.topics_by_id.keys())
        for topic, pid, part, previous in _changed_partitions(before, after):
            key = (topic.id, pid)
            members = frozenset(part.isr) | frozenset(part.elr)
            if previous is None:
                for r in members:
                    joined[(topic.id, pid, r)] = offset
                continue
            old_members = frozenset(previous.isr) | frozenset(previous.elr)
            for r in members - old_members:
                joined[(topic.id, pid, r)] = offset
            if part.elr:
                figures.partitions_with_elr += 1
                figures.max_elr_size = max(figures.max_elr_size, len(part.elr))
            leader = part.leader
            if leader == previous.leader:
                continue
            if leader == NO_LEADER:
                figures.leaderless_transitions += 1
            else:
                figures.partition_elections += 1
                from_isr = leader in previous.isr
                from_elr = leader in previous.elr
                if from_elr and not from_isr:
                    figures.elr_elections += 1
                if not (from_isr or from_elr) and not unclean_election_enabled(after, topic.name):
                    # Only the last-known-leader election may pick someone else; whether it was
                    # allowed depends on the unclean registrations of this batch (judged at its end).
                    outsiders.append((topic.name, pid, offset, previous, part))
            elections.append(
                _Election(
                    topic.id,
                    pid,
                    offset,
                    tuple((r, joined.get((*key, r), -1)) for r in sorted(old_members)),
                    members,
                    previous.leader,
                    leader,
                )
            )
        self._broker_transitions(before, after, None)

    def _broker_transitions(
        self, before: MetadataImage, after: MetadataImage, memory: _ControllerMemory | None
    ) -> None:
        """MonotonicBrokerEpoch (reference chain when ``memory`` is None) and the broker figures."""
        if before.brokers is after.brokers:
            return
        max_epoch = self._reference_max_epoch if memory is None else memory.max_epoch
        where = "the reference chain" if memory is None else f"controller {memory.node_id}"
        old = before.brokers
        for broker_id, reg in after.brokers.items():
            seen = max_epoch.get(broker_id, -1)
            if reg.epoch < seen:
                self.world.report(
                    "MonotonicBrokerEpoch",
                    f"broker {broker_id}'s epoch went from {seen} to {reg.epoch} on {where} "
                    f"(offset {after.provenance.last_offset})",
                )
            elif reg.epoch > seen:
                max_epoch[broker_id] = reg.epoch
            if memory is not None:
                continue
            prev = old.get(broker_id)
            if prev is reg:
                continue
            figures = self.cfigures
            if prev is None or prev.epoch != reg.epoch:
                figures.registrations += 1
            elif prev.fenced != reg.fenced:
                if reg.fenced:
                    figures.fenced_brokers += 1
                else:
                    figures.unfenced_brokers += 1
            if reg.in_controlled_shutdown and (prev is None or not prev.in_controlled_shutdown):
                figures.controlled_shutdowns += 1

    def _batch_done(
        self,
        before: MetadataImage,
        after: MetadataImage,
        elections: list[_Election],
        outsiders: list[tuple[str, int, int, PartitionRegistration, PartitionRegistration]],
    ) -> None:
        """A data batch replayed: the state rules, then the rules that depend on the unclean
        registrations the batch commits (they follow their partition changes in the batch)."""
        self._check_states(before, after, "the reference chain")
        brokers = getattr(self.world, "brokers", {})
        newly_unclean: list[int] = []
        unclean_at = self._unclean_at
        unclean_before: dict[int, int] = {}  # ``unclean_at`` before this batch, for those it moves
        if before.brokers is not after.brokers:
            for broker_id, reg in after.brokers.items():
                prev = before.brokers.get(broker_id)
                if prev is not None and prev.incarnation_id == reg.incarnation_id:
                    continue
                actor = brokers.get(broker_id)
                kind = actor.start_kinds.get(reg.incarnation_id) if actor is not None else None
                if kind == AFTER_UNCLEAN_STOP:
                    unclean_before[broker_id] = unclean_at.get(broker_id, -1)
                    unclean_at[broker_id] = reg.registration_offset
                    self.cfigures.unclean_registrations += 1
                    newly_unclean.append(broker_id)
        for name, pid, offset, previous, part in outsiders:
            leader = part.leader
            # Spec 5.5 step 4 (E7): ISR empty, every ELR member gone by an unclean restart in this
            # very change, the winner is the last known leader, and it is marked RECOVERING.
            last_known = (
                part.leader_recovery_state == LeaderRecoveryState.RECOVERING
                and not previous.isr
                and all(r in newly_unclean for r in previous.elr)
                and previous.last_known_elr == (leader,)
            )
            if last_known:
                self.cfigures.last_known_leader_elections += 1
                continue
            if self._unclean_recovery_election(before, previous, part):
                self.cfigures.unclean_recovery_elections += 1
                continue
            self.world.report(
                "LeaderFromIsrOrElr",
                f"offset {offset}: {name}-{pid} elected {leader}, which was in neither ISR "
                f"{list(previous.isr)} nor ELR {list(previous.elr)} (LKE {list(previous.last_known_elr)}, "
                f"LRS now {part.leader_recovery_state}, unclean registrations in this batch {newly_unclean})",
            )
        # NoCleanReplicaLost is KIP-966's promise: with eligible.leader.replicas.version 0 the
        # controller keeps an uncleanly restarted broker in the ISR, as Kafka did before it (the
        # data-last-replica-standing-no-elr twin measures what that costs).
        elr_on = after.features.get(ELR_FEATURE, 0) >= 1
        for e in elections if elr_on else ():
            topic = after.topics_by_id.get(e.topic_id)
            if topic is None or unclean_election_enabled(after, topic.name):
                continue
            clean = []
            for r, joined_at in e.before:
                known = unclean_at.get(r, -1)
                if known > e.offset and r in e.after:
                    # Its unclean registration comes later in this batch. The partition changes
                    # of that registration precede it and remove it: one that keeps it is an
                    # earlier operation of the controller, which could not know of the shutdown
                    # yet (controller-crash-restart seed 9180: a fencing elected it).
                    known = unclean_before[r]
                if known <= joined_at:
                    clean.append(r)
            if clean and not e.after.intersection(clean):
                self.world.report(
                    "NoCleanReplicaLost",
                    f"offset {e.offset}: {topic.name}-{e.partition_id} leader {e.leader_before} -> "
                    f"{e.leader_after} left ISR u ELR = {sorted(e.after)} without any of its clean "
                    f"members {clean}",
                )
        for broker_id in newly_unclean if elr_on else ():
            kept = [
                *after.partitions_with_isr_member(broker_id),
                *after.partitions_with_elr_member(broker_id),
            ]
            if kept:
                names = sorted(
                    f"{after.topics_by_id[tp.topic_id].name}-{tp.partition_id}"
                    for tp in kept
                    if tp.topic_id in after.topics_by_id
                )
                self.world.report(
                    "NoCleanReplicaLost",
                    f"broker {broker_id} registered after an unclean shutdown (epoch "
                    f"{after.brokers[broker_id].epoch}) but stays in the ISR or ELR of {names}",
                )

    def _unclean_recovery_election(
        self, before: MetadataImage, previous: PartitionRegistration, part: PartitionRegistration
    ) -> bool:
        """Whether a leader from outside ISR and ELR is unclean recovery's (KIP-966 part 2): the
        controllers run it, the partition was leaderless with nobody eligible for the strategy
        (Balanced: ISR and ELR empty; Aggressive: no active member at the start of the batch),
        and the change is an unclean election of that one broker (ISR = [it], ELR empty,
        RECOVERING). Which replica it chose is for AckedRecordKept to judge, on the data."""
        config = getattr(self.world, "controller_config", None)
        if config is None or not config.unclean_recovery_manager_enabled:
            return False
        strategy = config.unclean_recovery_strategy.value
        if strategy == "None" or previous.leader != NO_LEADER or previous.isr:
            return False
        if strategy == "Balanced" and previous.elr:
            return False
        if any((b := before.brokers.get(r)) is not None and b.is_active for r in previous.elr):
            return False
        return (
            part.leader_recovery_state == LeaderRecoveryState.RECOVERING
            and part.isr == (part.leader,)
            and not part.elr
        )

    def _check_states(self, before: MetadataImage | None, after: MetadataImage, where: str) -> None:
        """LeaderInIsr, IsrElrDisjoint and ElrOnlyBelowMinIsr on what changed since ``before``."""
        world = self.world
        elr_on = after.features.get(ELR_FEATURE, 0) >= 1
        for topic, pid, part, _previous in _changed_partitions(before, after):
            isr = part.isr
            elr = part.elr
            if part.leader != NO_LEADER and part.leader not in isr:
                world.report(
                    "LeaderInIsr",
                    f"{where} at offset {after.provenance.last_offset}: {topic.name}-{pid} leader "
                    f"{part.leader} is not in its ISR {list(isr)}",
                )
            replicas = part.replicas
            if (
                any(r in elr for r in isr)
                or any(r not in replicas for r in isr)
                or any(r not in replicas for r in elr)
            ):
                world.report(
                    "IsrElrDisjoint",
                    f"{where} at offset {after.provenance.last_offset}: {topic.name}-{pid} ISR "
                    f"{list(isr)}, ELR {list(elr)}, replicas {list(replicas)}",
                )
            if elr and elr_on:
                m = effective_min_isr(after, topic.name, len(replicas))
                if len(isr) >= m:
                    world.report(
                        "ElrOnlyBelowMinIsr",
                        f"{where} at offset {after.provenance.last_offset}: {topic.name}-{pid} has ELR "
                        f"{list(elr)} with ISR {list(isr)} at effective min ISR {m}",
                    )

    @property
    def reference_image(self) -> MetadataImage:
        """The committed log replayed from scratch, as far as it is known."""
        return self._reference.image

    def reference_at(self, offset: int) -> MetadataImage | None:
        """The reference image after every committed record up to ``offset`` (None: not yet)."""
        if offset >= self._reference_next:
            return None
        i = bisect.bisect_right(self._reference_offsets, offset) - 1
        return self._reference_images[i] if i >= 0 else MetadataImage.EMPTY

    # -- the controllers -------------------------------------------------------------------------

    def _settle(self, node: SimNode) -> None:
        """Check ``node``'s controller: ActiveControllerLeads, and the images it published since
        its last check."""
        memory = self._controllers[node.node_id]
        self._collect(memory)
        controller = memory.controller
        active_epoch = controller.active_epoch
        if active_epoch is not None:
            role = role_name(node.raft)
            epoch = int(node.raft.epoch)
            if role == "LEADER" and epoch == active_epoch:
                memory.led_epoch = epoch
            elif not (role == "RESIGNED" and epoch == active_epoch and memory.led_epoch == active_epoch):
                self.world.report(
                    "ActiveControllerLeads",
                    f"controller {node.node_id} is active in epoch {active_epoch} but its core is "
                    f"{role} in epoch {epoch} (seen leading epoch {memory.led_epoch})",
                )
        pending = memory.pending
        done = 0
        for image in pending:
            reference = self.reference_at(image.provenance.last_offset)
            if reference is None:
                break  # the reference has not replayed that far yet: later
            done += 1
            self._check_controller_image(memory, image, reference)
        if done:
            del pending[:done]

    def _check_controller_image(
        self, memory: _ControllerMemory, image: MetadataImage, reference: MetadataImage
    ) -> None:
        self.cfigures.image_checks += 1
        where = f"controller {memory.node_id}"
        if not image_equal(image, reference, ignore_registration_offsets=memory.loaded_snapshot):
            differences = "; ".join(
                image_differences(
                    image, reference, ignore_registration_offsets=memory.loaded_snapshot, limit=5
                )
            )
            self.world.report(
                "CommittedImageAgreement",
                f"{where}'s committed image at offset {image.provenance.last_offset} differs from the "
                f"committed log replayed from scratch: {differences}",
            )
        previous = memory.last_image
        self._check_states(previous, image, where)
        self._broker_transitions(previous if previous is not None else MetadataImage.EMPTY, image, memory)
        memory.last_image = image

    def _deep_check(self, node: SimNode) -> None:
        """The controller's image against its own latest snapshot plus its own log after it."""
        memory = self._controllers[node.node_id]
        image: MetadataImage = memory.controller.image
        upto = memory.delivered_to
        log = node.log
        loader = MetadataLoader()
        start = 0
        snapshot_id = log.latest_snapshot_id()
        try:
            if snapshot_id is not None and snapshot_id.offset <= upto:
                raw = log.read_snapshot(snapshot_id)
                if raw is None:
                    return
                reader = SnapshotReader.from_raw(raw)
                loader.load_snapshot(
                    snapshot_id.offset,
                    snapshot_id.epoch,
                    reader.last_contained_log_timestamp,
                    list(reader.records()),
                )
                start = snapshot_id.offset
            elif log.start_offset() > 0:
                return  # only a snapshot the controller has not loaded yet covers the log start
            if start < upto:
                for batch in iter_batches(log.read(start, _READ_ALL)):
                    if batch.last_offset >= upto:
                        break
                    committed = CommittedBatch.from_batch(batch)
                    if committed.is_control or not committed.records:
                        loader.handle_control_batch(
                            committed.last_offset, committed.epoch, committed.append_timestamp_ms
                        )
                    else:
                        loader.handle_batch(
                            committed.base_offset,
                            committed.epoch,
                            committed.append_timestamp_ms,
                            committed.records,
                        )
        except KraftError as e:
            self.world.report(
                "CommittedImageAgreement",
                f"controller {node.node_id}: its snapshot {snapshot_id} and log up to {upto} do not "
                f"replay: {e}",
            )
            return
        self.cfigures.deep_checks += 1
        ignore = start > 0 or memory.loaded_snapshot
        if not image_equal(image, loader.image, ignore_registration_offsets=ignore):
            differences = "; ".join(
                image_differences(image, loader.image, ignore_registration_offsets=ignore, limit=5)
            )
            self.world.report(
                "CommittedImageAgreement",
                f"controller {node.node_id}'s committed image (offset {image.provenance.last_offset}) "
                f"differs from its snapshot {snapshot_id} plus its log up to {upto}: {differences}",
            )

    # -- liveness --------------------------------------------------------------------------------

    def expect_brokers_ready(self, label: str, within_ms: int) -> None:
        """By ``within_ms`` from now every running broker (up, not silent, not shutting down) is
        registered with its current epoch and unfenced in the active controller's committed image,
        and every up controller has replayed what is committed now."""
        world = self.world
        since = world.now_ms
        baseline = self._reference_next
        world.end_ms = max(world.end_ms, since + within_ms)

        def check() -> None:
            active = None
            for node in world.nodes.values():
                memory = self._controllers.get(node.node_id)
                if not node.up or memory is None:
                    continue
                if memory.controller.is_active and (active is None or node.raft.epoch > active.raft.epoch):
                    active = node
                if memory.delivered_to < baseline:
                    world.report(
                        "Liveness",
                        f"{label}: {within_ms} ms after t={since} controller {node.node_id} replayed "
                        f"only up to offset {memory.delivered_to} (committed then: {baseline})",
                    )
            if active is None:
                world.report("Liveness", f"{label}: no active controller {within_ms} ms after t={since}")
                return
            assert active.process is not None and active.process.controller is not None
            image = active.process.controller.image
            for broker in getattr(world, "brokers", {}).values():
                if not broker.up or broker.silent or broker.state == "SHUTTING_DOWN":
                    continue
                reg = image.brokers.get(broker.broker_id)
                if (
                    broker.state != "RUNNING"
                    or reg is None
                    or reg.epoch != broker.epoch
                    or reg.fenced
                    or reg.in_controlled_shutdown
                ):
                    world.report(
                        "Liveness",
                        f"{label}: broker {broker.broker_id} (epoch {broker.epoch}) is not an active broker "
                        f"in controller {active.node_id}'s image {within_ms} ms after t={since}: {reg}",
                    )

        world.schedule(since + within_ms, f"brokers-ready:{label}", check)
