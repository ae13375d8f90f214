"""Named safety invariants, checked after every simulated event, plus the run's figures.

Owns the global record of what was committed and the per-node memory needed to state the rules
across crashes. It reads node state (``RaftNode`` observation attributes, the durable log and
election store) and never changes anything. A violation is reported by name with the step and
time; the world stops the seed.

Invariants (spec section 11, Kafka's RaftEventSimulationTest, and Raft's safety properties):

* **SingleLeader** - at most one node is ever leader of an epoch; any node (or persisted election
  state) naming a leader for an epoch names that one.
* **MonotonicEpoch** - a node's epoch never decreases, across restarts (its store persists), and
  its persisted epoch equals its in-memory epoch (the core persists before it acts).
* **SingleVote** - a node's persisted vote never changes within an epoch.
* **MonotonicHighWatermark** - the rule checked: a node's high watermark may be *unknown* at any
  time (a new leader starts with it unknown, a restarted node until it hears from the leader), but
  every *known* value is >= the largest value the node has known before. For voters this holds
  across restarts: a voter fsyncs its log before it fetches again, so its flushed log still
  covers every offset it ever called committed and its next HW (min(leader HW, LEO)) cannot be
  lower. Observers do not fsync (spec section 2), so for them the rule holds per incarnation.
* **HighWatermarkWithinLog** - a known HW is <= the node's log end offset.
* **NoTruncationBelowHighWatermark** - a node's log end offset never drops below the largest HW
  the node has known (same incarnation scope as MonotonicHighWatermark).
* **ConsistentCommittedData** (log matching on committed data) - a global map offset ->
  (batch epoch, batch CRC) of every entry any node has treated as committed (offset < its HW);
  every node's committed entries must agree with it.
* **CommittedOnMajority** - the end of the committed prefix is within the log of a majority of
  voters at all times, crashed voters included (their flushed log): nothing committed is lost.
* **LeaderCompleteness** - when a node is first seen as leader of epoch e, its log holds every
  committed entry of an epoch < e (or a snapshot covering it), with the same epoch and CRC.
* **MajorityReachedHighWatermark** - a leader's known HW is reached by a majority of voters' logs.
  With dynamic voters (KIP-853) "the voters" of both majority rules are the set of the latest
  VotersRecord *committed* below the offset in question, decoded here from the committed log (not
  taken from the cores), and a node counts only while its directory id is the voter's: a wiped
  voter that rejoined with a new directory holds nothing for the majority. (The set in force may be
  newer and uncommitted; single-voter changes keep the old and new majorities overlapping, so the
  committed set is the one the committed data must be on.) An offset a newer set committed may
  outlive that set: the leader that appended a removal is cut off and the next leader truncates
  it. Then the rule is the one elections rely on: the voters lacking the offset form a majority of
  neither the committed set nor any set in force.
* **VoterSetAgreement** (KIP-853) - every node's voter set history agrees, at every offset below
  the committed end, with the committed VotersRecords; and a node's set in force is the latest
  record of its own log (or snapshot, or bootstrap checkpoint).
* **SnapshotAtLogStart** - log start > 0 implies the earliest snapshot ends exactly there.
* **LeaderNeverLoadSnapshot**, **StateMachineAgreement** - reported by the state machines.
* **Liveness** - checked at scenario-chosen deadlines (``expect_progress``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kraft.raft.types import ReplicaKey
from kraft.raft.voters import VoterSet, control_records_in
from kraft.records.batch import iter_batch_headers, read_batch_header
from kraft.records.control import ControlType
from kraft.sim.world import Observed, SimNode, role_name

if TYPE_CHECKING:
    from kraft.sim.world import World

_READ_ALL = 1 << 40


@dataclass(slots=True)
class _NodeMemory:
    last_epoch: int = -1
    max_hw: int = -1  # largest known HW (voters: across incarnations)
    checked_to: int = 0  # committed entries below this offset were checked against the ledger
    last_role: str = ""
    last_hw: int = -1  # the HW seen by the last check (-1: unknown), for the majority rule
    votes: dict[int, ReplicaKey] = field(default_factory=dict)


@dataclass(slots=True)
class Figures:
    """Run figures beyond the violations (see the CLI's JSON keys)."""

    elections: int = 0  # Candidate epochs entered (binding elections started)
    prospective_rounds: int = 0  # entries into Prospective (pre-vote rounds)
    max_epoch: int = 0
    first_leader_ms: int | None = None
    unavailable_ms: int = 0
    last_commit_ms: int = 0
    resignations_seen: int = 0


class InvariantChecker:
    def __init__(self, world: World) -> None:
        self.world = world
        self.committed: dict[int, tuple[int, int]] = {}  # offset -> (batch epoch, batch crc)
        self.committed_end = 0
        self.leaders_by_epoch: dict[int, int] = {}
        self._seen_leader: dict[tuple[int, int], None] = {}
        self._candidate_epochs: dict[tuple[int, int], None] = {}
        self._memory: dict[int, _NodeMemory] = {n: _NodeMemory() for n in world.nodes}
        self.figures = Figures()
        self._full_next = False  # check every node after the next event (see after_event)
        # _majority_end's values by voter set, used inside after_event only. They stay valid from
        # one event to the next until a node's log end moves: only the nodes an event touched can
        # have moved (compared with _ends_seen), an action may have moved any (a full pass), and
        # a crash, restart or wipe moves one outside a pass (the hooks below).
        self._in_pass = False
        self._majority_end_cache: dict[int, int] = {}
        self._ends_seen: dict[int, int] = {}  # each node's log end offset at its last check
        self._headers: dict[bytes, tuple[int, int, tuple[int, int], bool]] = {}  # see _batch_header
        # Committed voter sets by offset (KIP-853); (-1, None) = the static voters of the world.
        initial: VoterSet | None = getattr(world, "initial_voter_set", None)
        self.voter_sets: list[tuple[int, VoterSet | None]] = [(-1, initial)]
        # Node id -> offset -> (its set, the committed set) found equal (check_voter_set_agreement).
        self._agreed_voter_sets: dict[int, dict[int, tuple[VoterSet, VoterSet]]] = {}
        # Voter keys whose disk a scenario destroyed (KIP-853 worlds: the node came back with a new
        # directory id) -> the log end offset that disk had. The majority rules credit such a
        # voter with that prefix: losing a disk is the fault injected, not a bug to report; what
        # matters is that the new directory never counts (its own log is checked by its new key).
        self.destroyed: dict[ReplicaKey, int] = {}
        self._rank = {node_id: i for i, node_id in enumerate(world.nodes)}  # world (check) order
        # Nodes whose last check saw them leading with a known HW (for the majority rule).
        self._hw_leaders: dict[int, None] = {}

    # -- lifecycle hooks from the world --------------------------------------------------------

    def node_stopped(self, node: SimNode) -> None:
        self._majority_end_cache.clear()
        memory = self._memory[node.node_id]
        memory.checked_to = 0
        memory.last_role = "DOWN"
        memory.last_hw = -1
        self._hw_leaders.pop(node.node_id, None)
        if not node.is_voter:
            memory.max_hw = -1  # an observer's unflushed tail may be gone
        self._check_committed_on_majority()

    def node_started(self, node: SimNode) -> None:
        self._majority_end_cache.clear()
        self._memory[node.node_id].checked_to = 0

    def node_wiped(self, node: SimNode) -> None:
        self._majority_end_cache.clear()
        self._memory[node.node_id] = _NodeMemory()
        self._hw_leaders.pop(node.node_id, None)

    # -- the per-event pass --------------------------------------------------------------------
    #
    # Every rule below is a function of one node's observable state (role, epoch, leader, HW, log,
    # election store), of the global records kept here, and - for MajorityReachedHighWatermark and
    # CommittedOnMajority - of the voters' log end offsets. A node's observable state changes only
    # when the world calls into it: its own poll, or a scenario action (crash, restart, resign,
    # client append, ...). A delivery only queues an envelope in an inbox. So after every event
    # the checker re-evaluates exactly what that event could have changed, which gives the same
    # verdicts, at the same step, as re-evaluating everything:
    #
    # * ``after_event()`` (scenario actions, tests): every node, as before.
    # * ``after_event(node)`` (a poll of ``node``) or ``after_event([nodes])`` (the world's client
    #   workload, which calls only into the leaders it appends to): every rule for those nodes; the
    #   leaders' majority rule for the others if a voter's log may have moved; the
    #   committed-on-majority rule.
    # * ``after_idle_event()`` (a delivery), ``after_event([])``: nothing can have changed.
    #
    # The only cross-node input of the per-node rules is ``leaders_by_epoch`` (SingleLeader
    # compares every node's named leader with it). When a check records a new leader, the rest of
    # this event and the whole next event are checked in full, exactly as a full pass would have
    # seen it.

    def after_event(
        self, touched: SimNode | Sequence[SimNode] | None = None, *, observed: Observed | None = None
    ) -> None:
        """Check the invariants after an event that may have changed the ``touched`` node(s)
        (None: any node may have changed). ``observed``: the single touched node's state, already
        read by the world after the event (saves reading it again)."""
        world = self.world
        ledger = world.ledger
        if ledger.problems:
            for problem in ledger.problems:
                world.report(*problem)
            ledger.problems.clear()
        scope: Sequence[SimNode] = ()
        if touched is None or self._full_next:
            full = True
        else:
            full = False
            # A concrete-class test: isinstance against the Sequence ABC costs a Python-level call.
            scope = (touched,) if isinstance(touched, SimNode) else touched
            if not scope:
                return  # nothing was touched: nothing can have changed
        self._full_next = False
        seen = self._ends_seen
        if full:
            self._majority_end_cache.clear()
            for node_id, node in world.nodes.items():
                seen[node_id] = node.log.end_offset()
        else:
            single = observed is not None and len(scope) == 1
            for n in scope:
                end = observed.end_offset if single else n.log.end_offset()  # type: ignore[union-attr]
                if seen.get(n.node_id) != end:
                    seen[n.node_id] = end
                    self._majority_end_cache.clear()
        self._in_pass = True
        try:
            self._check_nodes(full, scope, observed)
        finally:
            self._in_pass = False

    def _check_nodes(self, full: bool, scope: Sequence[SimNode], observed: Observed | None) -> None:
        world = self.world
        nodes = world.nodes
        rank = self._rank
        # By id: SimNode is a dataclass whose == would compare every field.
        scope_ids = [scope[0].node_id] if len(scope) == 1 else [n.node_id for n in scope]
        observed_id = scope_ids[0] if observed is not None and len(scope_ids) == 1 else None
        # A voter's log end feeds the majority rules; an observer's does not.
        voter_moved = full
        for n in scope:
            if n.is_voter:
                voter_moved = True
                break
        # The nodes this pass visits, in world order: all of them, or the touched ones plus (if a
        # voter's log may have moved) those last seen leading with a known HW. Untouched nodes
        # need nothing else: their state is what their last check saw.
        hw_leaders = self._hw_leaders
        if full:
            ids = list(nodes)
        elif voter_moved and hw_leaders:
            if len(scope_ids) == 1 and len(hw_leaders) == 1:
                # The usual poll (of the leader, or of a voter while one leader is known): the
                # sorted union of two ids without building a set.
                (leader_id,) = hw_leaders
                polled_id = scope_ids[0]
                if leader_id == polled_id:
                    ids = scope_ids
                elif rank[polled_id] < rank[leader_id]:
                    ids = [polled_id, leader_id]
                else:
                    ids = [leader_id, polled_id]
            else:
                ids = sorted({*scope_ids, *hw_leaders}, key=rank.__getitem__)
        else:
            ids = scope_ids
        leaders_known = len(self.leaders_by_epoch)
        memories = self._memory
        i = 0
        while i < len(ids):
            node_id = ids[i]
            i += 1
            node = nodes[node_id]
            if node.raft is None:
                continue
            if full or node_id in scope_ids:
                self._check_node(node, memories[node_id], observed if node_id == observed_id else None)
                if len(self.leaders_by_epoch) != leaders_known:
                    # A new leader entry: SingleLeader must now look at every node again: the
                    # rest of this pass covers every later node, the next event every node.
                    if not full:
                        after = rank[node_id]
                        ids = ids[:i] + [n for n in nodes if rank[n] > after]
                    full = True
                    voter_moved = True
                    self._full_next = True
                    leaders_known = len(self.leaders_by_epoch)
            elif voter_moved:
                memory = memories[node_id]
                if memory.last_role == "LEADER" and memory.last_hw >= 0:
                    self._check_majority_reached(node, memory.last_hw)
        self._check_committed_on_majority()

    def after_idle_event(self) -> None:
        """Check after an event that changed no node's observable state (a delivery to an inbox)."""
        # after_event(()) does nothing else than report ledger problems or run a pending full pass.
        if self._full_next or self.world.ledger.problems:
            self.after_event(())

    def _check_node(self, node: SimNode, memory: _NodeMemory, observed: Observed | None = None) -> None:
        """Every per-node rule for ``node`` (which is up); ``observed``: its state, already read."""
        world = self.world
        raft = node.raft
        node_id = node.node_id
        if observed is None:
            observed = Observed(
                role_name(raft), int(raft.epoch), raft.leader_id, raft.high_watermark, node.log.end_offset()
            )
        role, epoch, leader_id, hw, end = observed

        # MonotonicEpoch (in memory and persisted) and SingleVote.
        if epoch < memory.last_epoch:
            world.report("MonotonicEpoch", f"node {node_id} epoch went from {memory.last_epoch} to {epoch}")
        if epoch > memory.last_epoch:
            memory.last_epoch = epoch
        if epoch > self.figures.max_epoch:
            self.figures.max_epoch = epoch
        stored = node.store.read()
        stored_epoch = stored.epoch if stored is not None else 0
        if stored_epoch != epoch:
            world.report(
                "MonotonicEpoch",
                f"node {node_id} is in epoch {epoch} ({role}) but its persisted epoch is {stored_epoch}",
            )
        if stored is not None and stored.voted_key is not None:
            previous = memory.votes.setdefault(stored.epoch, stored.voted_key)
            if previous.id != stored.voted_key.id:
                world.report(
                    "SingleVote",
                    f"node {node_id} voted for {previous.id} and then {stored.voted_key.id} in epoch "
                    f"{stored.epoch}",
                )

        # SingleLeader, LeaderCompleteness and role figures.
        if role == "LEADER":
            known = self.leaders_by_epoch.setdefault(epoch, node_id)
            if known != node_id:
                world.report("SingleLeader", f"nodes {known} and {node_id} are both leader of epoch {epoch}")
            if (node_id, epoch) not in self._seen_leader:
                self._seen_leader[(node_id, epoch)] = None
                if self.figures.first_leader_ms is None:
                    self.figures.first_leader_ms = world.now_ms
                self._check_leader_completeness(node, epoch)
        else:
            if leader_id is not None:
                known_leader = self.leaders_by_epoch.get(epoch)
                if known_leader is not None and known_leader != leader_id:
                    world.report(
                        "SingleLeader",
                        f"node {node_id} ({role}) names {leader_id} leader of epoch {epoch}, "
                        f"but {known_leader} was",
                    )
        if stored is not None and stored.leader_id is not None:
            known_leader = self.leaders_by_epoch.get(stored.epoch)
            if known_leader is not None and known_leader != stored.leader_id:
                world.report(
                    "SingleLeader",
                    f"node {node_id} persisted leader {stored.leader_id} for epoch {stored.epoch}, "
                    f"but {known_leader} was",
                )
        if role == "CANDIDATE" and (node_id, epoch) not in self._candidate_epochs:
            self._candidate_epochs[(node_id, epoch)] = None
            self.figures.elections += 1
        if role == "PROSPECTIVE" and memory.last_role != "PROSPECTIVE":
            self.figures.prospective_rounds += 1
        if role == "RESIGNED" and memory.last_role != "RESIGNED":
            self.figures.resignations_seen += 1
        memory.last_role = role

        # High watermark rules and committed data.
        log = node.log
        if hw is not None and hw >= 0:
            if hw < memory.max_hw:
                world.report(
                    "MonotonicHighWatermark",
                    f"node {node_id} high watermark went from {memory.max_hw} to {hw}",
                )
            if hw > end:
                world.report(
                    "HighWatermarkWithinLog",
                    f"node {node_id} high watermark {hw} is above its log end offset {end}",
                )
            if hw > memory.max_hw:
                memory.max_hw = hw
            if hw > memory.checked_to:
                self._check_committed(node, memory, min(hw, end))
            if role == "LEADER":
                self._check_majority_reached(node, hw)
            memory.last_hw = hw
            if role == "LEADER":
                self._hw_leaders[node_id] = None
            else:
                self._hw_leaders.pop(node_id, None)
        else:
            memory.last_hw = -1
            self._hw_leaders.pop(node_id, None)
        if end < memory.max_hw:
            world.report(
                "NoTruncationBelowHighWatermark",
                f"node {node_id} log end offset {end} is below the high watermark {memory.max_hw} it knew",
            )
        start = log.start_offset()
        if start > 0:
            earliest = log.earliest_snapshot_id()
            if earliest is None or earliest.offset != start:
                world.report(
                    "SnapshotAtLogStart",
                    f"node {node_id} log starts at {start} but its earliest snapshot is {earliest}",
                )

    # -- individual checks ---------------------------------------------------------------------

    def _check_committed(self, node: SimNode, memory: _NodeMemory, upto: int) -> None:
        """Entries in [checked_to, upto) of ``node`` are committed: record or compare each one."""
        log = node.log
        begin = max(memory.checked_to, log.start_offset())
        if begin < upto:
            committed = self.committed
            # The stored batches one by one (what ``log.read(begin, ...)`` would concatenate).
            for data in log.batches_from(begin):
                base, last_offset_delta, value, is_control = self._batch_header(data)
                if base >= upto:
                    break
                if is_control and base + last_offset_delta >= self.committed_end:
                    self._note_voter_records(data, upto)
                for offset in range(max(base, begin), min(base + last_offset_delta + 1, upto)):
                    known = committed.setdefault(offset, value)
                    if known != value:
                        self.world.report(
                            "ConsistentCommittedData",
                            f"node {node.node_id} has committed offset {offset} in a batch of epoch "
                            f"{value[0]} (crc {value[1]:08x}) but it was committed as epoch {known[0]} "
                            f"(crc {known[1]:08x})",
                        )
                        break
        memory.checked_to = max(memory.checked_to, upto)
        if upto > self.committed_end:
            self._commit_advanced(upto)

    def _batch_header(self, batch: bytes) -> tuple[int, int, tuple[int, int], bool]:
        """(base offset, last offset delta, (epoch, CRC), is control) of one whole stored batch.

        A header is a function of the batch's bytes, and every replica stores the same bytes for
        a committed batch: parse each distinct batch once per run, not once per node."""
        known = self._headers.get(batch)
        if known is None:
            for _pos, header in iter_batch_headers(batch):
                known = (
                    header.base_offset,
                    header.last_offset_delta,
                    (header.partition_leader_epoch, header.crc),
                    header.is_control,
                )
                break
            assert known is not None  # a stored batch is whole
            self._headers[batch] = known
        return known

    def _commit_advanced(self, upto: int) -> None:
        figures = self.figures
        now = self.world.now_ms
        gap = now - figures.last_commit_ms
        if gap > self.world.timing.stall_threshold_ms:
            figures.unavailable_ms += gap
        figures.last_commit_ms = now
        self.committed_end = upto

    def _note_voter_records(self, batch: bytes | memoryview, upto: int) -> None:
        """A committed control batch: record its VotersRecords (KIP-853) below ``upto``."""
        for offset, kind, message in control_records_in(batch):
            if kind is ControlType.KRAFT_VOTERS and offset < upto and offset > self.voter_sets[-1][0]:
                self.voter_sets.append((offset, VoterSet.from_record(message)))
                self._majority_end_cache.clear()

    def _committed_set(self, before: int) -> tuple[int, VoterSet | None]:
        """(index in ``voter_sets``, set) of the latest committed voter set below ``before``."""
        if len(self.voter_sets) == 1:  # the usual case (static voters): the loop below gives this
            return 0, self.voter_sets[0][1]
        index = 0
        for i, (offset, _voters) in enumerate(self.voter_sets):
            if offset >= before:
                break
            index = i
        return index, self.voter_sets[index][1]

    def _members(self, voters: VoterSet) -> tuple[list[int], list[int]]:
        """The nodes that are voters of ``voters`` by id and current directory id, and the log
        ends credited to its voters whose disk was destroyed (see ``destroyed``)."""
        nodes = self.world.nodes
        ids = [v for v in voters.ids if v in nodes and voters.is_voter(ReplicaKey(v, nodes[v].directory_id))]
        destroyed = [end for key, end in self.destroyed.items() if voters.is_voter(key) and key.id not in ids]
        return ids, destroyed

    def committed_voters(self, before: int) -> tuple[list[int], int, list[int]]:
        """The nodes that are voters (by id and current directory id) of the latest committed
        voter set below offset ``before``, that set's majority, and the log ends credited to its
        voters whose disk was destroyed."""
        return self._voters_of(self._committed_set(before)[1])

    def _voters_of(self, voters: VoterSet | None) -> tuple[list[int], int, list[int]]:
        """``committed_voters`` for the set ``voters`` (None: the world's static voters)."""
        if voters is None:
            return self.world.voter_ids, self.world.majority, []
        ids, destroyed = self._members(voters)
        return ids, voters.majority, destroyed

    def _majority_end(self, before: int) -> int:
        """The largest offset a majority of the voters of ``before`` (see ``committed_voters``)
        reach in their logs (crashed voters: their flushed log).

        "At least a majority of voters have a log end >= x" holds exactly when x <= this value.
        Logs do not change while the checker runs, and the value is kept from one pass to the next
        until a checked node's log end moves (see ``_majority_end_cache``).
        """
        voter_sets = self.voter_sets
        if len(voter_sets) == 1:  # static voters (the usual case): _committed_set, inline
            key, voters = 0, voter_sets[0][1]
        else:
            key, voters = self._committed_set(before)
        cached = self._majority_end_cache.get(key) if self._in_pass else None
        if cached is not None:
            return cached
        ids, majority, destroyed = self._voters_of(voters)
        nodes = self.world.nodes
        ends = [nodes[v].log.end_offset() for v in ids]
        ends += destroyed
        ends.sort(reverse=True)
        value = ends[majority - 1] if len(ends) >= majority else -1
        if self._in_pass:
            self._majority_end_cache[key] = value
        return value

    def _catch_up_voter_records(self, node: SimNode, upto: int) -> None:
        """Note the VotersRecords of ``node``'s log below ``upto`` (committed: a leader's HW, the
        committed end), in case the per-node pass has not recorded them yet."""
        log = node.log
        begin = max(self.voter_sets[-1][0] + 1, log.start_offset())
        if begin >= upto or begin >= log.end_offset():
            return
        data = log.read(begin, _READ_ALL)
        for pos, header in iter_batch_headers(data):
            if header.base_offset >= upto:
                break
            if header.is_control:
                self._note_voter_records(data[pos : pos + header.size_in_bytes], upto)

    def _sets_in_force(self) -> list[VoterSet]:
        """The distinct voter sets the running nodes have in force (dynamic voters)."""
        sets: list[VoterSet] = []
        for node in self.world.nodes.values():
            voters = getattr(node.raft, "voter_set", None)
            if voters is not None and voters not in sets:
                sets.append(voters)
        return sets

    def _holders(self, voters: VoterSet, offset: int) -> int:
        """How many voters of ``voters`` (by key; destroyed disks by the end they had) reach
        ``offset``."""
        nodes = self.world.nodes
        ids, destroyed = self._members(voters)
        return sum(1 for v in ids if nodes[v].log.end_offset() >= offset) + sum(
            1 for end in destroyed if end >= offset
        )

    def _reached_by_a_set_in_force(self, offset: int) -> bool:
        """Dynamic voters: whether a majority (by key) of a voter set some running node has in
        force reaches ``offset``. Raft commits with the latest set of the leader's log, committed
        or not (a single-voter change keeps its majorities overlapping the previous set's), so an
        offset may be committed by the new set before the set itself is."""
        return any(self._holders(voters, offset) >= voters.majority for voters in self._sets_in_force())

    def _no_majority_lacks(self, offset: int) -> bool:
        """Dynamic voters: whether the voters whose logs end below ``offset`` can form a majority
        of neither the committed voter set nor any set a running node has in force, so that no
        leader can be elected without ``offset`` (its voters refuse a candidate whose log is
        behind theirs).

        This is the rule for an offset committed by a newer set that no log holds any more: a
        leader appends a removal ({1,2,3,5} -> {1,2,5}), commits up to ``offset`` with voters 1 and
        2 (a majority of the new set), is cut off, and the next leader truncates the removal. The
        set in force is {1,2,3,5} again and only two of its four voters hold ``offset``, but the
        other two are not a majority of it either (found by voter-changes seed 1987)."""
        committed = self._committed_set(offset)[1]
        sets = self._sets_in_force()
        # Not ``committed not in sets``: mypyc compiles that as ``committed.__contains__(sets)``
        # (the left operand's class defines __contains__), a TypeError in the compiled build
        # (voter-changes seed 2104); the interpreter was right.
        if committed is not None and all(voters != committed for voters in sets):
            sets.insert(0, committed)
        return all(len(voters.ids) - self._holders(voters, offset) < voters.majority for voters in sets)

    def _check_majority_reached(self, leader: SimNode, hw: int) -> None:
        if hw <= self._majority_end(hw):
            return
        if self.voter_sets[0][1] is not None:  # dynamic voters: the HW may commit a new set
            self._catch_up_voter_records(leader, hw)
            if hw <= self._majority_end(hw) or self._reached_by_a_set_in_force(hw):
                return
        world = self.world
        ids, majority, _destroyed = self.committed_voters(hw)
        reached = [v for v in ids if world.nodes[v].log.end_offset() >= hw]
        world.report(
            "MajorityReachedHighWatermark",
            f"leader {leader.node_id} high watermark {hw} is reached only by voters {reached} of "
            f"{sorted(ids)} (need {majority})",
        )

    def _check_committed_on_majority(self) -> None:
        end = self.committed_end
        if end == 0 or end <= self._majority_end(end):
            return
        if self.voter_sets[0][1] is not None and (
            self._reached_by_a_set_in_force(end) or self._no_majority_lacks(end)
        ):
            return
        world = self.world
        ids, majority, _destroyed = self.committed_voters(end)
        holders = [v for v in ids if world.nodes[v].log.end_offset() >= end]
        world.report(
            "CommittedOnMajority",
            f"committed prefix ends at {end} but only voters {holders} of {sorted(ids)} have logs "
            f"reaching it (need {majority})",
        )

    def check_voter_set_agreement(self, node: SimNode) -> None:
        """VoterSetAgreement for one running node (dynamic-voter worlds call it after each poll)."""
        raft = node.raft
        history = getattr(raft, "voter_history", None)
        if history is None:
            return
        committed = dict(self.voter_sets[1:])
        entries = history.entries()
        # Pairs (the node's set at an offset, the committed set there) already found equal: both
        # are immutable, so the same two objects are equal again at the next poll. Comparing
        # every entry of every history after every poll was a third of a dynamic-voter run.
        agreed = self._agreed_voter_sets.setdefault(node.node_id, {})
        for offset, voters in entries:
            if offset >= self.committed_end or offset < 0:
                continue
            expected = committed.get(offset)
            if expected is None:
                continue
            known = agreed.get(offset)
            if known is not None and known[0] is voters and known[1] is expected:
                continue
            if expected == voters:
                agreed[offset] = (voters, expected)
            elif not self._diverges_at(node, offset):
                self.world.report(
                    "VoterSetAgreement",
                    f"node {node.node_id} has voter set {voters} at offset {offset}, but the committed "
                    f"VotersRecord there is {expected}",
                )
                return
        # And every committed VotersRecord in the node's own log (not a divergent tail) must be in
        # its history: a node that skipped one would run an old set.
        log = node.log
        start, end = log.start_offset(), min(log.end_offset(), self.committed_end)
        have = {offset for offset, _voters in entries}
        for offset, voters in self.voter_sets[1:]:
            if start <= offset < end and offset not in have and not self._diverges_at(node, offset):
                self.world.report(
                    "VoterSetAgreement",
                    f"node {node.node_id} holds the committed VotersRecord {voters} at offset {offset} "
                    "in its log but not in its voter history",
                )
                return
        if entries and raft.voter_set != entries[-1][1]:
            self.world.report(
                "VoterSetAgreement",
                f"node {node.node_id} uses voter set {raft.voter_set} but its latest record is {entries[-1]}",
            )

    def _diverges_at(self, node: SimNode, offset: int) -> bool:
        """Whether the node's log holds, at ``offset``, a batch other than the committed one: an
        uncommitted tail from an old epoch that its next leader will truncate. Its voter set there
        is the one in force for it until then (the latest record, even uncommitted), and is not
        a disagreement about committed data."""
        log = node.log
        if offset < log.start_offset() or offset >= log.end_offset():
            return False
        header = read_batch_header(log.read(offset, 1))
        if header is None:
            return False
        return (header.partition_leader_epoch, header.crc) != self.committed.get(offset)

    def _check_leader_completeness(self, leader: SimNode, epoch: int) -> None:
        """A new leader of ``epoch`` must hold every entry committed in an earlier epoch."""
        world = self.world
        log = leader.log
        start = log.start_offset()
        end = log.end_offset()
        committed = self.committed
        if start < end:
            data = log.read(start, _READ_ALL)
            for _pos, header in iter_batch_headers(data):
                base = header.base_offset
                if base >= self.committed_end:
                    break
                value = (header.partition_leader_epoch, header.crc)
                for offset in range(max(base, start), base + header.last_offset_delta + 1):
                    known = committed.get(offset)
                    if known is None or known[0] >= epoch:
                        continue
                    if known != value:
                        world.report(
                            "LeaderCompleteness",
                            f"node {leader.node_id} became leader of epoch {epoch} with offset {offset} "
                            f"from epoch {value[0]}, but the committed entry there is from epoch {known[0]}",
                        )
                        return
        for offset in range(max(end, start), self.committed_end):
            known = committed.get(offset)
            if known is None:
                continue
            if known[0] < epoch:
                world.report(
                    "LeaderCompleteness",
                    f"node {leader.node_id} became leader of epoch {epoch} with log end {end}, missing "
                    f"committed offset {offset} of epoch {known[0]} (committed prefix ends at "
                    f"{self.committed_end})",
                )
            return

    # -- liveness and the end of the run -------------------------------------------------------

    def expect_progress(self, label: str, within_ms: int) -> None:
        """By ``within_ms`` from now the cluster must be available again: the committed prefix has
        moved past where it is now *and* it moved within the last ``stall_threshold_ms`` before the
        deadline (so a leader commits at the deadline, not just a straggler right after the fault).

        Scenarios inject no new fault that could take availability away inside the window.
        """
        world = self.world
        baseline = self.committed_end
        since = world.now_ms
        # A run lasts until its last liveness deadline has been checked: never skip one silently.
        world.end_ms = max(world.end_ms, since + within_ms)
        threshold = world.timing.stall_threshold_ms

        def check() -> None:
            stalled_ms = world.now_ms - self.figures.last_commit_ms
            if self.committed_end <= baseline or stalled_ms > threshold:
                leader = world.current_leader()
                world.report(
                    "Liveness",
                    f"{label}: {within_ms} ms after t={since} nothing has been committed for {stalled_ms} ms "
                    f"(committed prefix {self.committed_end}, was {baseline}; leader "
                    f"{leader.node_id if leader is not None else None}, max epoch {self.figures.max_epoch})",
                )

        world.schedule(since + within_ms, f"liveness:{label}", check)

    def expect_caught_up(self, label: str, within_ms: int) -> None:
        """Within ``within_ms`` from now every node that is up must have applied everything that is
        committed now (voters and observers alike; a restarted node may replay or load a snapshot).

        Scenarios call this once every fault is healed and every crashed node restarted.
        """
        world = self.world
        since = world.now_ms
        baseline = self.committed_end
        world.end_ms = max(world.end_ms, since + within_ms)

        def check() -> None:
            for node in world.nodes.values():
                sm = node.sm
                if sm is None or node.shutting_down:
                    continue
                if sm.next_offset < baseline:
                    world.report(
                        "Liveness",
                        f"{label}: node {node.node_id} applied only up to offset {sm.next_offset}, "
                        f"{within_ms} ms after t={since} when offset {baseline} was committed "
                        f"(its log ends at {node.log.end_offset()}, high watermark "
                        f"{node.raft.high_watermark if node.raft is not None else None})",
                    )

        world.schedule(since + within_ms, f"caught-up:{label}", check)

    def expect_leader_by(self, at_ms: int) -> None:
        """A first leader must have been elected by ``at_ms``."""
        world = self.world
        world.end_ms = max(world.end_ms, at_ms)

        def check() -> None:
            if self.figures.first_leader_ms is None:
                world.report("Liveness", f"no leader was elected by t={at_ms} ms")

        world.schedule(at_ms, "liveness:first-leader", check)

    def at_end(self) -> None:
        world = self.world
        gap = world.now_ms - self.figures.last_commit_ms
        if gap > world.timing.stall_threshold_ms:
            self.figures.unavailable_ms += gap
        for problem in world.ledger.problems:
            world.report(*problem)
        world.ledger.problems.clear()

    def snapshot(self) -> dict[str, Any]:
        return {"committed_end": self.committed_end, "leaders": len(self.leaders_by_epoch)}
