"""Unclean recovery (KIP-966 part 2): elect the most complete log for a partition nobody can lead.

When every replica that held a partition's committed records restarted uncleanly, the partition
waits leaderless with ISR and ELR empty (kraft never elects a last known leader that restarted
uncleanly: ``partition_change``). Often another replica still holds all the data (a kill -9 keeps
the page cache). The brokers report what their logs hold (``kraft.metadata.replica_log_info``, in
their heartbeats) and this manager picks the replica with the most complete log: the highest (last
written leader epoch, log end offset), ties to replica order. ``ReplicationControl`` writes the
election as an unclean one (ISR = [leader], ELR and LastKnownElr emptied, leader RECOVERING, leader
epoch + 1); the new leader reports RECOVERED once it leads (``kraft.broker.isr``).

When it elects (``unclean.recovery.strategy``; KIP-966's election order, spec 5.7):

* **Balanced** (kraft's default): a partition whose ISR and ELR are both empty, once *every*
  replica has reported for the current partition epoch, so the choice is the longest log the
  cluster has; before that it waits.
* **Aggressive**: a partition with no active (unfenced, not shutting down) ISR or ELR member, once
  every active replica has reported (a replica that is down is not waited for, and a fenced ELR
  member does not stop it: that is the KIP's trade of data for availability).
* **None**: never; the partition waits for an operator's unclean election (ElectLeaders).
* Either strategy, ``unclean.recovery.timeout.ms`` after the first report for the partition:
  from the reports it has.

The winner must be an active broker that reported for the current partition epoch, in its current
registration. Before the timeout it must also hold a log at least as complete as every report,
including those of replicas that cannot lead yet: a fenced replica with the longest log is waited
for rather than passed over.

Not here: partitions of topics with ``unclean.leader.election.enable=true`` (Kafka's immediate
unclean election serves them), partitions without ELR (``eligible.leader.replicas.version=0``), and
operator-triggered elections (ElectLeaders, unchanged).

Sans-IO and soft state, like broker sessions (``BrokerHeartbeats``): fed by heartbeats (``record``),
driven by the controller's timers (``poll(image, now_ms)``), never a clock or a random draw. The
reports live in the active controller's memory only: a new active controller starts empty and
relearns them from the next heartbeats (one heartbeat interval), and its timeouts start again.

Invariant: a report counts only while it matches both the reporter's current broker epoch and the
partition's current partition epoch. A broker that restarts (a power loss may have shortened its
log) gets a new epoch, and a partition that changes gets a new partition epoch; either way an old
report is never mistaken for the present state of a log.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kraft.common.errors import KraftError
from kraft.metadata.image import MetadataImage, TopicIdPartition
from kraft.metadata.partition import NO_LEADER, PartitionRegistration
from kraft.metadata.replica_log_info import ReplicaLogInfo, awaits_recovery

DEFAULT_TIMEOUT_MS = 300_000  # unclean.recovery.timeout.ms (KIP-966: 5 minutes)


class UncleanRecoveryStrategy(enum.Enum):
    """``unclean.recovery.strategy`` (KIP-966's names, which are the config's values)."""

    NONE = "None"
    BALANCED = "Balanced"
    AGGRESSIVE = "Aggressive"

    @classmethod
    def parse(cls, text: str) -> UncleanRecoveryStrategy:
        for strategy in cls:
            if strategy.value.lower() == text.strip().lower():
                return strategy
        raise KraftError(
            f"unclean.recovery.strategy must be one of {', '.join(s.value for s in cls)}, not {text!r}"
        )


@dataclass(frozen=True, slots=True)
class RecoveryElection:
    """A decision: ``leader`` takes ``tp``; ``report`` is its log; ``timed_out``: decided by the
    timeout rather than with every awaited report in."""

    tp: TopicIdPartition
    leader: int
    report: ReplicaLogInfo
    timed_out: bool


def needs_recovery(p: PartitionRegistration, image: MetadataImage, strategy: UncleanRecoveryStrategy) -> bool:
    """Whether ``strategy`` would elect for ``p`` once the reports are in (see the module docstring;
    the topic and feature gates are the caller's)."""
    if p.leader != NO_LEADER:
        return False
    match strategy:
        case UncleanRecoveryStrategy.BALANCED:
            return not p.isr and not p.elr
        case UncleanRecoveryStrategy.AGGRESSIVE:
            return awaits_recovery(p, image)
        case UncleanRecoveryStrategy.NONE:
            return False


def choose_leader(
    p: PartitionRegistration,
    reports: Mapping[int, ReplicaLogInfo],
    *,
    is_acceptable: Callable[[int], bool],
    awaited: Iterable[int],
    timed_out: bool,
) -> int | None:
    """The replica to elect for ``p``, or None to wait. Pure.

    Args:
        reports: the valid reports (current broker and partition epochs), by replica.
        is_acceptable: may this broker lead now (active).
        awaited: the replicas whose reports the strategy waits for.
        timed_out: the wait is over: choose from ``reports`` as they are.
    """
    candidates = [r for r in p.replicas if r in reports and is_acceptable(r)]
    if not candidates:
        return None
    best = candidates[0]
    for r in candidates[1:]:
        if reports[r].completeness > reports[best].completeness:
            best = r  # strictly better only: ties go to the earlier replica
    if timed_out:
        return best
    if any(r not in reports for r in awaited):
        return None
    most_complete = max(info.completeness for info in reports.values())
    if reports[best].completeness < most_complete:
        return None  # a replica that cannot lead yet holds more: wait for it (or the timeout)
    return best


class UncleanRecoveryManager:
    """The active controller's unclean recovery (see the module docstring).

    Lifecycle: ``reset`` at activation and deactivation; ``record`` on every heartbeat of a
    registered broker (its reports replace the previous ones); ``poll`` on every timer tick returns
    the elections to write and when to tick again for a timeout.
    """

    def __init__(
        self,
        strategy: UncleanRecoveryStrategy = UncleanRecoveryStrategy.BALANCED,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
    ) -> None:
        if timeout_ms < 1:
            raise KraftError(f"unclean.recovery.timeout.ms must be at least 1, not {timeout_ms}")
        self.strategy = strategy
        self.timeout_ms = timeout_ms
        # broker id -> (its broker epoch when it reported, its reports by partition)
        self._reports: dict[int, tuple[int, dict[TopicIdPartition, ReplicaLogInfo]]] = {}
        # partition -> when this controller first heard a report while it needed recovery
        self._waiting_since: dict[TopicIdPartition, int] = {}

    @property
    def enabled(self) -> bool:
        return self.strategy is not UncleanRecoveryStrategy.NONE

    def reset(self) -> None:
        self._reports.clear()
        self._waiting_since.clear()

    def forget(self, broker_id: int) -> None:
        """The broker's incarnation ended (re-registration, unregistration): drop its reports."""
        self._reports.pop(broker_id, None)

    def record(self, broker_id: int, broker_epoch: int, reports: Iterable[ReplicaLogInfo]) -> None:
        """A heartbeat of ``broker_id`` in ``broker_epoch`` (already checked against its
        registration) carried ``reports``: they replace what it reported before."""
        if not self.enabled:
            return
        by_tp = {info.tp: info for info in reports}
        if by_tp:
            self._reports[broker_id] = (broker_epoch, by_tp)
        else:
            self._reports.pop(broker_id, None)

    def waiting(self) -> dict[TopicIdPartition, int]:
        """Partitions waiting for recovery and since when (a copy, for metrics and tests)."""
        return dict(self._waiting_since)

    def poll(
        self,
        image: MetadataImage,
        now_ms: int,
        *,
        is_acceptable: Callable[[int], bool],
        eligible_topic: Callable[[str], bool],
    ) -> tuple[list[RecoveryElection], int | None]:
        """The elections due now, and when a timeout comes next (None: none pending).

        Args:
            image: the controller's latest image.
            is_acceptable: may this broker lead (active in ``image``).
            eligible_topic: may unclean recovery serve this topic (ELR on, unclean leader
                election off for it).
        """
        if not self.enabled or (not self._reports and not self._waiting_since):
            return [], None
        reported: set[TopicIdPartition] = set(self._waiting_since)
        for _, by_tp in self._reports.values():
            reported.update(by_tp)
        elections: list[RecoveryElection] = []
        wake: int | None = None
        for tp in sorted(reported, key=lambda t: (str(t.topic_id), t.partition_id)):
            topic = image.topics_by_id.get(tp.topic_id)
            p = None if topic is None else topic.partitions.get(tp.partition_id)
            if (
                topic is None
                or p is None
                or not eligible_topic(topic.name)
                or not needs_recovery(p, image, self.strategy)
            ):
                self._waiting_since.pop(tp, None)
                continue
            reports = self._valid_reports(image, tp, p)
            if not reports and tp not in self._waiting_since:
                continue  # only stale reports: nothing has started
            since = self._waiting_since.setdefault(tp, now_ms)
            deadline = since + self.timeout_ms
            timed_out = now_ms >= deadline
            if self.strategy is UncleanRecoveryStrategy.BALANCED:
                awaited: list[int] = list(p.replicas)
            else:
                awaited = [r for r in p.replicas if is_acceptable(r)]
            leader = choose_leader(
                p, reports, is_acceptable=is_acceptable, awaited=awaited, timed_out=timed_out
            )
            if leader is not None:
                # Kept waiting until the image shows the leader: a write that did not fit is
                # simply decided again at the next poll.
                elections.append(RecoveryElection(tp, leader, reports[leader], timed_out))
            elif not timed_out:
                wake = deadline if wake is None else min(wake, deadline)
        return elections, wake

    def _valid_reports(
        self, image: MetadataImage, tp: TopicIdPartition, p: PartitionRegistration
    ) -> dict[int, ReplicaLogInfo]:
        """The reports for ``tp`` that describe its replicas' logs now (the module invariant)."""
        out: dict[int, ReplicaLogInfo] = {}
        for r in p.replicas:
            entry = self._reports.get(r)
            broker = image.brokers.get(r)
            if entry is None or broker is None or entry[0] != broker.epoch:
                continue
            info = entry[1].get(tp)
            if info is not None and info.partition_epoch == p.partition_epoch:
                out[r] = info
        return out
