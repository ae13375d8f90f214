"""KIP-853 in the simulator: a quorum whose voter set lives in the log and changes at run time.

``DynamicVotersWorld`` formats its initial voters as ``kraft storage format --initial-controllers``
does (the bootstrap checkpoint 0-0 with the voter set and kraft.version 1) and its observers as
``--no-initial-controllers``; every node knows the others only through
``controller.quorum.bootstrap.servers``. Wiping a node's disk gives it a new directory id, so it
comes back as an observer, never as the voter it was.

``AdminClient`` is ``kraft metadata-quorum add-controller/remove-controller`` as an actor: it sends
AddRaftVoter / RemoveRaftVoter to the node it believes leads, and retries (another node, after a
timeout or a retriable error) until the change is done or refused for good.

The checker's majority rules follow the committed voter sets (``InvariantChecker.voter_sets``),
and after every poll it checks VoterSetAgreement on the polled node.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.listener import SnapshotWriter
from kraft.raft.messages import AddRaftVoterRequest, Envelope, RemoveRaftVoterRequest
from kraft.raft.types import OffsetAndEpoch, ReplicaKey
from kraft.raft.voters import KRAFT_VERSION_1, VoterNode, VoterSet
from kraft.sim.world import CLUSTER_ID, Observed, SimNode, World, endpoint_of

ADMIN_ID = 900  # the admin client's actor id (nodes are 1..n)
ADMIN_TIMEOUT_MS = 3000  # per attempt, as the tool's request timeout
RETRIABLE = frozenset(
    {ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.BROKER_NOT_AVAILABLE}
)


class DynamicVotersWorld(World):
    """A world with kraft.version 1 (see the module docstring)."""

    dynamic_voters = True

    def _after_init(self) -> None:
        # Every controller is a bootstrap server (as an operator lists them all): voters change,
        # and a list of the initial voters only can end up naming no voter at all.
        self.bootstrap_targets = {-2 - i: n for i, n in enumerate(self.nodes)}
        self.initial_voter_set = VoterSet(
            VoterNode(ReplicaKey(v, self.nodes[v].directory_id), (endpoint_of(v),)) for v in self.voter_ids
        )
        for v in self.voter_ids:
            writer = SnapshotWriter(
                self.nodes[v].log.inner.store_snapshot(OffsetAndEpoch(0, 0)),
                0,
                lambda _sid: None,
                kraft_version=KRAFT_VERSION_1,
                voters=self.initial_voter_set,
            )
            writer.freeze()
        self.checker.voter_sets[0] = (-1, self.initial_voter_set)
        self.admin = AdminClient(self)
        self.add_actor(self.admin)
        self.add_poll_watcher(self._check_voter_sets)

    def _check_voter_sets(self, node: SimNode, _outbound: Any, _observed: Observed) -> None:
        if node.up:
            self.checker.check_voter_set_agreement(node)

    def wipe(self, node_id: int) -> None:
        """A replaced disk: empty log and election state, and a new directory id (KIP-853)."""
        node = self.nodes[node_id]
        self.checker.destroyed[self.key_of(node_id)] = node.log.end_offset()
        super().wipe(node_id)
        node.directory_id = uuid.UUID(int=self.rng.getrandbits(128), version=4)
        self.trace(f"node {node_id} has a new directory {node.directory_id}")

    def key_of(self, node_id: int) -> ReplicaKey:
        return ReplicaKey(node_id, self.nodes[node_id].directory_id)

    def committed_voter_set(self) -> VoterSet:
        voters = self.checker.voter_sets[-1][1]
        assert voters is not None
        return voters


class AdminClient:
    """Voter changes as the admin tool makes them (an ``Actor``)."""

    actor_id = ADMIN_ID
    incarnation = 0
    up = True

    def __init__(self, world: DynamicVotersWorld) -> None:
        self.world = world
        self._next_correlation = 1
        # correlation id -> callback with the answer body (None: no answer in time)
        self._waiting: dict[int, Callable[[Any], None]] = {}
        self.done: list[str] = []  # completed operations, for the report
        self.refused: list[str] = []
        self.busy = False

    def receive(self, envelope: Any) -> None:
        callback = self._waiting.pop(envelope.correlation_id, None)
        if callback is not None:
            callback(envelope.body)

    def _target(self) -> int | None:
        leader = self.world.current_leader()
        if leader is not None:
            return leader.node_id
        up = [n.node_id for n in self.world.up_nodes()]
        return self.world.rng.choice(up) if up else None

    def _attempt(self, body: Any, on_answer: Callable[[Any], None]) -> None:
        world = self.world
        target = self._target()
        correlation = self._next_correlation
        self._next_correlation += 1
        if target is not None:
            self._waiting[correlation] = on_answer
            world.send(Envelope(ADMIN_ID, target, correlation, body), world.now_ms)

        def expire() -> None:
            callback = self._waiting.pop(correlation, None)
            if callback is not None or target is None:
                on_answer(None)

        world.schedule(world.now_ms + ADMIN_TIMEOUT_MS, "admin-timeout", expire)

    def change(
        self, label: str, build: Callable[[], Any], *, deadline_ms: int, then: Callable[[bool], None]
    ) -> None:
        """Send ``build()`` until it succeeds (``then(True)``), is refused for good or the
        deadline passes (``then(False)``)."""
        world = self.world
        self.busy = True

        def answered(body: Any) -> None:
            error = None if body is None else body.error_code
            if error == ErrorCode.NONE:
                self.busy = False
                self.done.append(label)
                world.trace(f"admin: {label} done")
                then(True)
            elif (error is None or error in RETRIABLE) and world.now_ms < deadline_ms:
                world.schedule(world.now_ms + 100, "admin-retry", lambda: self._attempt(build(), answered))
            else:
                self.busy = False
                self.refused.append(f"{label}: {error}")
                world.trace(f"admin: {label} gave up ({error})")
                then(False)

        self._attempt(build(), answered)

    def add(self, node_id: int, *, deadline_ms: int, then: Callable[[bool], None]) -> None:
        world = self.world

        def build() -> AddRaftVoterRequest:
            return AddRaftVoterRequest(
                cluster_id=CLUSTER_ID,
                timeout_ms=ADMIN_TIMEOUT_MS,
                voter_key=world.key_of(node_id),
                listeners=(endpoint_of(node_id),),
            )

        self.change(f"add {node_id}", build, deadline_ms=deadline_ms, then=then)

    def remove(self, key: ReplicaKey, *, deadline_ms: int, then: Callable[[bool], None]) -> None:
        def build() -> RemoveRaftVoterRequest:
            return RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_key=key)

        self.change(f"remove {key.id}", build, deadline_ms=deadline_ms, then=then)


# ---- scenarios ---------------------------------------------------------------------------------


def _after(world: World, delay_ms: int, label: str, action: Callable[[], None]) -> None:
    world.schedule(world.now_ms + delay_ms, label, action)


def _majority_up_without(world: DynamicVotersWorld, victim: int) -> bool:
    """Whether the committed voters that are up (by key) stay a majority without ``victim``."""
    voters = world.committed_voter_set()
    up = [v for v in voters.ids if v != victim and world.nodes[v].up and voters.is_voter(world.key_of(v))]
    return len(up) >= voters.majority


def voter_changes(world: World) -> None:
    """Add, remove and replace (wipe, then remove the old directory and add the new one) voters,
    one change at a time, while nodes crash and restart and the leader is cut off now and then."""
    assert isinstance(world, DynamicVotersWorld)
    admin = world.admin
    rng = world.rng
    faults_end = world.end_ms - 9000
    world.checker.expect_leader_by(6000)

    def next_change() -> None:
        if world.now_ms >= faults_end:
            return
        voters = world.committed_voter_set()
        ids = sorted(voters.ids)
        outside = [n for n in world.nodes if n not in voters]
        options = ["add"] if outside and len(ids) < 5 else []
        if len(ids) > 2:
            options.append("remove")
        # Replace (wipe a disk) once per run, while every voter of the set has its disk: two
        # lost disks in a small set lose the quorum for good (no leader is left to remove them).
        # Nor while a change is uncommitted: a set of two in some log whose other voter then
        # loses its disk can never elect a leader again (as in Kafka; recovery would need an
        # unclean path, which neither has).
        intact = all(voters.is_voter(world.key_of(v)) for v in ids) and all(
            n.raft is None or n.raft.voter_set == voters for n in world.nodes.values()
        )
        if len(ids) > 2 and intact and not world.extra.get("replaced"):
            options.append("replace")
        op = rng.choice(options)
        deadline = world.now_ms + 8000
        if op == "add":
            admin.add(rng.choice(outside), deadline_ms=deadline, then=lambda _ok: pause())
        elif op == "remove":
            node = voters.node(rng.choice(ids))
            assert node is not None
            admin.remove(node.key, deadline_ms=deadline, then=lambda _ok: pause())
        else:
            victim = rng.choice(ids)
            old = voters.node(victim)
            assert old is not None
            world.extra["replaced"] = world.extra.get("replaced", 0) + 1
            world.crash(victim)
            world.wipe(victim)
            world.restart(victim)
            admin.remove(
                old.key,
                deadline_ms=deadline,
                then=lambda ok: (
                    admin.add(victim, deadline_ms=deadline + 8000, then=lambda _ok2: pause())
                    if ok
                    else pause()
                ),
            )

    def pause() -> None:
        _after(world, rng.randint(300, 1500), "next-change", next_change)

    def fault() -> None:
        if world.now_ms >= faults_end:
            return
        roll = rng.random()
        candidates = [n.node_id for n in world.up_nodes() if _majority_up_without(world, n.node_id)]
        if roll < 0.5 and candidates:
            victim = rng.choice(candidates)
            world.crash(victim)
            _after(world, rng.randint(500, 2000), "restart", lambda: world.restart(victim))
        elif roll < 0.7:
            leader = world.current_leader()
            if leader is not None:
                others = [n for n in world.nodes if n != leader.node_id]
                world.network.isolate(leader.node_id, others)
                _after(world, rng.randint(800, 2500), "heal", world.network.heal)
        _after(world, rng.randint(1500, 3000), "fault", fault)

    def heal() -> None:
        world.network.heal()
        for node_id, node in world.nodes.items():
            if not node.up:
                world.restart(node_id)
        world.extra["voter_changes_done"] = len(admin.done)
        world.extra["voter_changes_refused"] = len(admin.refused)
        world.checker.expect_progress("after the voter changes and faults", 6000)
        world.checker.expect_caught_up("after the voter changes and faults", 8000)

    _after(world, 3000, "next-change", next_change)
    _after(world, 4000, "fault", fault)
    world.schedule(faults_end, "heal", heal)


class WipedVoterNeverCounts:
    """Expectation of ``wiped-voter``: while the only live nodes are a lagging voter and a voter
    whose disk was replaced, no leader is elected and nothing new commits."""

    def __init__(self, world: DynamicVotersWorld, lagging: int) -> None:
        self.world = world
        self.lagging = lagging
        self.committed_end = world.checker.committed_end

    def check(self) -> None:
        world = self.world
        leader = world.current_leader()
        if leader is not None or world.checker.committed_end != self.committed_end:
            world.report(
                "WipedVoterNeverCounts",
                f"with only voter {self.lagging} and a replaced disk up, node "
                f"{None if leader is None else leader.node_id} leads and the committed end moved from "
                f"{self.committed_end} to {world.checker.committed_end}",
            )


def wiped_voter(world: World) -> None:
    """A voter's disk is replaced while the third voter lags: the wiped node (a new directory id)
    must not give that laggard the vote that would elect it without the committed entries. With
    static voters (kraft.version 0) it would. Then the old directory is removed and the new one
    added, and all three are voters again."""
    assert isinstance(world, DynamicVotersWorld)
    t = world.timing
    world.checker.expect_leader_by(6000)

    def start(leader: SimNode) -> None:
        lid = leader.node_id
        wiped, lagging = (v for v in world.voter_ids if v != lid)
        others = [n for n in world.nodes if n != lagging]
        world.network.isolate(lagging, others)  # the leader and ``wiped`` commit without it
        _after(world, 2000, "wipe", lambda: wipe(lid, wiped, lagging))

    def wipe(lid: int, wiped: int, lagging: int) -> None:
        old = world.committed_voter_set().node(wiped)
        assert old is not None
        world.crash(lid)
        world.crash(wiped)
        world.wipe(wiped)
        world.network.heal()
        world.restart(wiped)
        expectation = WipedVoterNeverCounts(world, lagging)
        window = 4 * t.election_timeout_ms + t.fetch_timeout_ms
        _after(world, window, "wiped-window", lambda: back(lid, wiped, old.key, expectation))

    def back(lid: int, wiped: int, old_key: ReplicaKey, expectation: WipedVoterNeverCounts) -> None:
        expectation.check()
        world.restart(lid)
        admin = world.admin
        deadline = world.now_ms + 15_000
        admin.remove(
            old_key,
            deadline_ms=deadline,
            then=lambda ok: admin.add(wiped, deadline_ms=deadline, then=lambda ok2: done(wiped, ok and ok2)),
        )

    def done(wiped: int, ok: bool) -> None:
        if not ok:
            world.report(
                "Liveness",
                f"the replaced voter {wiped} was not removed and added back: {world.admin.refused}",
            )
            return
        world.checker.expect_caught_up("after the replaced voter was added back", 6000)

        def is_voter_again() -> None:
            node = world.nodes[wiped]
            if node.raft is None or not node.raft.is_voter:
                world.report("Liveness", f"node {wiped} is not a voter after it was added back")

        _after(world, 6000, "voter-again", is_voter_again)

    def when_leader() -> None:
        leader = world.current_leader()
        if leader is not None and leader.raft.high_watermark is not None:
            start(leader)
        else:
            _after(world, 50, "wait-leader", when_leader)

    _after(world, 2500, "wait-leader", when_leader)
