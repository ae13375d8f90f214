"""Named fault scenarios: each schedules faults, heals and liveness deadlines on a ``World``.

A scenario only *schedules*; choices (which node, how long) are drawn from the world's seeded rng
when the step runs, so a seed replays exactly. Liveness bounds are stated per scenario in terms of
the timing (spec section 11 values: election timeout T=1000, fetch timeout F=3000): a follower
notices a dead leader after F, then needs up to 2T for a pre-vote round and an election, plus
message delays; so "leader lost" scenarios allow ``F + 4T`` and graceful ones ``2T``.

Scenario-specific figures go into ``world.extra`` (e.g. ``majority_epoch_increase``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kraft.common.errors import KraftError
from kraft.node.node import NodeEnvelope
from kraft.raft.messages import (
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchResponse,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.types import ReplicaKey
from kraft.raft.voters import KRAFT_VERSION_1
from kraft.records.batch import iter_batch_headers
from kraft.sim import dynamic_voters
from kraft.sim.disk import DiskProfile
from kraft.sim.network import LinkProfile
from kraft.sim.world import Observed, SimNode, Timing, World, role_name


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    voters: int
    observers: int
    duration_ms: int
    setup: Callable[[World], None]
    timing: Timing = field(default_factory=Timing)
    # Builds the world (keyword arguments: seed, voters, observers, timing, pre_vote, end_ms);
    # None: a plain ``World`` of raft nodes with the replicated counter.
    make_world: Callable[..., World] | None = None


def _leader_lost_bound(world: World) -> int:
    t = world.timing
    return t.fetch_timeout_ms + 4 * t.election_timeout_ms + 1000


def _when_leader(world: World, label: str, then: Callable[[SimNode], None], every_ms: int = 50) -> None:
    """Run ``then(leader)`` as soon as a leader whose listener is ready exists (checked periodically)."""

    def attempt() -> None:
        leader = world.current_leader()
        if leader is not None and leader.sm is not None and leader.sm.leader_epoch == leader.raft.epoch:
            then(leader)
        else:
            world.schedule(world.now_ms + every_ms, label, attempt)

    attempt()


def _at(world: World, at_ms: int, label: str, action: Callable[[], None]) -> None:
    world.schedule(at_ms, label, action)


def _restart_all(world: World, ids: list[int]) -> None:
    for node_id in ids:
        world.restart(node_id)


def _majority_epoch(world: World, exclude: int) -> int:
    epochs = [n.raft.epoch for n in world.nodes.values() if n.is_voter and n.up and n.node_id != exclude]
    return max(epochs, default=0)


# -- scenarios ---------------------------------------------------------------------------------


def _steady(world: World) -> None:
    world.checker.expect_leader_by(6000)
    _at(world, 4000, "steady-check", lambda: world.checker.expect_progress("steady state", 2000))
    _at(world, 4000, "caught-up", lambda: world.checker.expect_caught_up("steady state", 3000))


def _leader_crash(world: World) -> None:
    world.checker.expect_leader_by(6000)
    bound = _leader_lost_bound(world)
    crashes = [0]

    def crash_leader(leader: SimNode) -> None:
        world.crash(leader.node_id)
        crashes[0] += 1
        world.checker.expect_progress(f"after crashing leader {leader.node_id}", bound)
        down_ms = world.rng.randint(1500, 3500)

        def restart() -> None:
            world.restart(leader.node_id)
            if crashes[0] == 2:
                world.checker.expect_caught_up("after the last restart", 5000)

        _at(world, world.now_ms + down_ms, "restart", restart)
        if crashes[0] < 2:
            # The next crash waits for this one's liveness deadline: windows never overlap.
            _at(
                world, world.now_ms + bound + 500, "crash", lambda: _when_leader(world, "crash", crash_leader)
            )

    _at(world, 3000, "crash", lambda: _when_leader(world, "crash", crash_leader))


def _crash_restart_loop(world: World) -> None:
    faults_end = world.end_ms - 9000
    bound = _leader_lost_bound(world)
    all_ids = list(world.nodes)

    def tick() -> None:
        if world.now_ms >= faults_end:
            return
        up_voters = [v for v in world.voter_ids if world.nodes[v].up]
        candidates = [
            n
            for n in all_ids
            if world.nodes[n].up and (not world.nodes[n].is_voter or len(up_voters) > world.majority)
        ]
        if candidates:
            victim = world.rng.choice(candidates)
            world.crash(victim)
            down_ms = world.rng.randint(200, 2500)
            _at(world, min(world.now_ms + down_ms, faults_end), "restart", lambda: world.restart(victim))
        _at(world, world.now_ms + world.rng.randint(500, 1500), "crash-tick", tick)

    def kill_all() -> None:
        # Spec section 11: kill every voter, then restart a majority first, the rest later.
        for v in world.voter_ids:
            world.crash(v)
        order = list(world.voter_ids)
        world.rng.shuffle(order)
        first = order[: world.majority]
        rest = order[world.majority :]
        _at(world, world.now_ms + 300, "restart-majority", lambda: _restart_all(world, first))
        _at(world, world.now_ms + 3000, "restart-rest", lambda: _restart_all(world, rest))

    def heal() -> None:
        for n in all_ids:
            world.restart(n)
        world.checker.expect_progress("after the last restart", bound)
        world.checker.expect_caught_up("after the last restart", bound)

    _at(world, 2000, "crash-tick", tick)
    _at(world, (2000 + faults_end) // 2, "kill-all", kill_all)
    _at(world, faults_end, "heal", heal)


def _partition_leader(world: World) -> None:
    bound = _leader_lost_bound(world)
    cuts = [0]

    def isolate(leader: SimNode) -> None:
        others = [n for n in world.nodes if n != leader.node_id]
        world.network.isolate(leader.node_id, others)
        cuts[0] += 1
        world.checker.expect_progress(f"after isolating leader {leader.node_id}", bound)
        heal_ms = world.rng.randint(4000, 6000)

        def heal() -> None:
            world.network.heal()
            if cuts[0] == 2:
                world.checker.expect_caught_up("after the last heal", 5000)

        _at(world, world.now_ms + heal_ms, "heal", heal)
        if cuts[0] < 2:
            # Back-to-back leader partitions: the next starts soon after this one's deadline.
            _at(world, world.now_ms + bound + 500, "isolate", lambda: _when_leader(world, "isolate", isolate))

    world.checker.expect_leader_by(6000)
    _at(world, 3000, "isolate", lambda: _when_leader(world, "isolate", isolate))


def _partition_rejoin(world: World) -> None:
    t = world.timing
    cut_ms = 10 * t.election_timeout_ms

    def cut(leader: SimNode) -> None:
        followers = [v for v in world.voter_ids if v != leader.node_id]
        victim = world.rng.choice(followers)
        others = [n for n in world.nodes if n != victim]
        world.network.isolate(victim, others)
        world.extra["isolated_voter"] = victim
        world.extra["epoch_at_cut"] = leader.raft.epoch
        _at(world, world.now_ms + cut_ms, "rejoin", lambda: rejoin(victim))

    def rejoin(victim: int) -> None:
        leader = world.current_leader()
        world.extra["majority_epoch_before_rejoin"] = _majority_epoch(world, victim)
        world.extra["isolated_epoch_before_rejoin"] = world.nodes[victim].raft.epoch
        world.extra["leader_before_rejoin"] = (
            (leader.node_id, leader.raft.epoch) if leader is not None else None
        )
        world.network.heal()
        world.checker.expect_progress("after the rejoin", _leader_lost_bound(world))
        world.checker.expect_caught_up("after the rejoin", _leader_lost_bound(world))
        _at(world, world.now_ms + 3000, "measure", lambda: measure(victim))

    def measure(victim: int) -> None:
        before = world.extra["majority_epoch_before_rejoin"]
        world.extra["majority_epoch_increase"] = _majority_epoch(world, victim) - before
        leader = world.current_leader()
        was = world.extra["leader_before_rejoin"]
        now = (leader.node_id, leader.raft.epoch) if leader is not None else None
        world.extra["leader_deposed_on_rejoin"] = was is None or now != was

    world.checker.expect_leader_by(6000)
    _at(world, 3000, "cut", lambda: _when_leader(world, "cut", cut))


def _zombie_leader(world: World) -> None:
    t = world.timing
    step_down_bound = int(t.fetch_timeout_ms * 1.5) + t.election_timeout_ms

    def cut(leader: SimNode) -> None:
        zombie = leader.node_id
        epoch = leader.raft.epoch
        other_voters = [v for v in world.voter_ids if v != zombie]
        # Observers (and the local client) still reach the zombie; only voters are cut off.
        world.network.partition([zombie], other_voters)
        world.checker.expect_progress(
            f"after cutting leader {zombie} off the voters", _leader_lost_bound(world)
        )
        # Messages already in flight may still land for one delivery delay; after that, the
        # zombie's high watermark must not move: it cannot hear from a majority.
        settle_ms = world.network.default.max_delay_ms * 2 + 1
        deadline = world.now_ms + step_down_bound

        def baseline() -> None:
            node = world.nodes[zombie]
            hw = node.raft.high_watermark if node.up else None
            watch(hw if hw is not None else -1)

        def watch(hw0: int) -> None:
            node = world.nodes[zombie]
            if not node.up or node.raft.epoch != epoch or role_name(node.raft) != "LEADER":
                world.extra["zombie_step_down_ms"] = world.now_ms - (deadline - step_down_bound)
                return
            hw = node.raft.high_watermark
            if hw is not None and hw > hw0:
                world.report(
                    "ZombieCommit", f"leader {zombie} cut off from the voters advanced its HW {hw0} -> {hw}"
                )
                return
            if world.now_ms >= deadline:
                world.report(
                    "CheckQuorum",
                    f"leader {zombie} of epoch {epoch} is still leader {step_down_bound} ms after losing "
                    "every voter",
                )
                return
            _at(world, world.now_ms + 20, "zombie-watch", lambda: watch(hw0))

        _at(world, world.now_ms + settle_ms, "zombie-baseline", baseline)

        def heal() -> None:
            world.network.heal()
            world.checker.expect_caught_up("after the heal", 5000)

        _at(world, world.now_ms + step_down_bound + 2000, "heal", heal)

    world.checker.expect_leader_by(6000)
    _at(world, 3000, "cut", lambda: _when_leader(world, "cut", cut))


def _flaky_network(world: World) -> None:
    """Loss as TCP meets it: a lost message is retransmitted (200 ms, doubling), never gone, so
    a node waits for the protocol, not for a request timeout that no real client would hit."""
    _flaky(world, retransmit_ms=200)


def _message_loss(world: World) -> None:
    """flaky-network's faults with loss that drops messages for good (the protocol's own retries
    and timeouts at work); this was flaky-network up to 2026-11-24."""
    _flaky(world, retransmit_ms=0)


def _flaky(world: World, *, retransmit_ms: int) -> None:
    faults_end = world.end_ms - 7000
    world.network.set_default(
        LinkProfile(min_delay_ms=1, max_delay_ms=40, loss=0.05, duplicate=0.03, retransmit_ms=retransmit_ms)
    )
    slow = world.rng.sample(world.voter_ids, k=min(2, len(world.voter_ids)))
    for v in slow:
        world.set_disk(v, DiskProfile(2, 30))
    ids = list(world.nodes)

    def tick() -> None:
        if world.now_ms >= faults_end:
            return
        kind = world.rng.random()
        if kind < 0.5:
            a, b = world.rng.sample(ids, k=2)
            world.network.block(a, b)  # one-way
            _at(
                world,
                world.now_ms + world.rng.randint(200, 2000),
                "unblock",
                lambda: world.network.unblock(a, b),
            )
        else:
            victim = world.rng.choice(ids)
            others = [n for n in ids if n != victim]
            world.network.isolate(victim, others)

            def unisolate() -> None:
                for o in others:
                    world.network.unblock(victim, o)
                    world.network.unblock(o, victim)

            _at(world, world.now_ms + world.rng.randint(500, 3000), "unisolate", unisolate)
        _at(world, world.now_ms + world.rng.randint(400, 1500), "fault-tick", tick)

    def heal() -> None:
        world.network.heal()
        world.network.set_default(LinkProfile())
        world.checker.expect_progress("after healing the network", _leader_lost_bound(world))
        world.checker.expect_caught_up("after healing the network", _leader_lost_bound(world))

    _at(world, 1500, "fault-tick", tick)
    _at(world, faults_end, "heal", heal)


@dataclass(slots=True)
class _Handover:
    """One resignation of the leader of ``epoch``, followed until the next leader is elected."""

    leader: int
    epoch: int
    started_ms: int
    successor: int | None = None  # the first preferred candidate of its EndQuorumEpoch
    prevote_ms: int | None = None  # the successor's first pre-vote after the resignation
    checked: bool = False  # up-to-date successor, healthy network (see FirstSuccessorWins)
    why_not: str = ""
    # Voters that answered the resignation (EndQuorumEpoch), and those whose refusal of the
    # successor's pre-vote came before it: the pre-vote outran the resignation there.
    told: dict[int, None] = field(default_factory=dict)
    outran: dict[int, None] = field(default_factory=dict)
    successor_rounds: int = 0  # the successor's pre-vote rounds (Prospective entries) since
    in_flight: bool = False  # its claim counted records the leader had sent it (not in yet)
    done: bool = False


class FirstSuccessorWins:
    """Named expectation **FirstSuccessorWins** for graceful handovers (resign or shutdown).

    The resigning leader of epoch E names its preferred successors in EndQuorumEpoch; the first,
    S, campaigns at once. The expectation *applies* when S's first pre-vote after the resignation
    claims a log at least as up to date as every voter's, counting the records the leader had
    already sent S in a Fetch answer of epoch E (so no voter may refuse it on the log once that
    answer is in; the resigned leader's log is the longest there can be), and the network
    delivers (every voter up, no partition, no loss). Then the next leader elected must be S, in
    epoch E + 1 (one epoch bump), without S leaving Prospective before it is a candidate (one
    pre-vote state, however many times it asks), and within ``2T + 1000`` ms of that pre-vote
    (T = election timeout).

    It covers two races of the hand-over that no rule of the receivers settles: the leader's last
    Fetch answer to S, with records, arrives after the EndQuorumEpoch (S must not campaign without
    them); and S's pre-vote reaches voters before their EndQuorumEpoch, and they refuse it, as
    their leader is alive as far as they know (S must not give up and follow the resigned leader).

    Figures (``world.extra``): ``handovers`` (resignations watched), ``handovers_checked`` (the
    expectation applied), ``handovers_first_successor_won`` (S won in E + 1 from its first
    Prospective state, whether or not the expectation applied), ``handovers_outran`` (a voter
    refused S's pre-vote before it had the EndQuorumEpoch) and ``handovers_answer_in_flight``
    (S's claim counted records the leader had sent it that S did not have yet).
    """

    def __init__(self, world: World) -> None:
        self.world = world
        self.current: _Handover | None = None
        self._last_role: dict[int, str] = {}
        # (sender, destination) -> (leader epoch, (last epoch, end offset)) of the last Fetch
        # answer with records: what the destination's log claims once that answer is in.
        self._sent: dict[tuple[int, int], tuple[int, tuple[int, int]]] = {}
        world.extra.update(
            handovers=0,
            handovers_checked=0,
            handovers_first_successor_won=0,
            handovers_outran=0,
            handovers_answer_in_flight=0,
        )
        world.add_poll_watcher(self.on_poll)

    def start(self, leader: SimNode) -> None:
        self.current = _Handover(leader.node_id, int(leader.raft.epoch), self.world.now_ms)
        self.world.extra["handovers"] += 1

    def on_poll(self, node: SimNode, outbound: Sequence[NodeEnvelope], observed: Observed) -> None:
        node_id = node.node_id
        role = observed.role
        for env in outbound:
            body = env.body
            if isinstance(body, FetchResponse) and body.records:
                last = None
                for _pos, header in iter_batch_headers(body.records):
                    last = header
                if last is not None:
                    claim = (last.partition_leader_epoch, last.next_offset)
                    self._sent[(node_id, env.destination)] = (body.current_leader_epoch, claim)
        h = self.current
        if h is not None and not h.done:
            if h.successor is None and node_id == h.leader:
                for env in outbound:
                    body = env.body
                    if (
                        isinstance(body, EndQuorumEpochRequest)
                        and body.leader_epoch == h.epoch
                        and body.preferred_candidates
                    ):
                        h.successor = body.preferred_candidates[0].id
                        break
            if node_id == h.successor:
                if role == "PROSPECTIVE" and self._last_role.get(node_id) != "PROSPECTIVE":
                    h.successor_rounds += 1
                if h.prevote_ms is None:
                    for env in outbound:
                        body = env.body
                        if (
                            isinstance(body, VoteRequest)
                            and body.pre_vote
                            and body.candidate_epoch == h.epoch
                        ):
                            self._first_prevote(h, node, (body.last_offset_epoch, body.last_offset))
                            break
            if h.successor is not None and node_id not in (h.leader, h.successor) and h.successor_rounds <= 1:
                for env in outbound:
                    body = env.body
                    if isinstance(body, EndQuorumEpochResponse) and env.destination == h.leader:
                        h.told[node_id] = None
                    elif (
                        isinstance(body, VoteResponse)
                        and env.destination == h.successor
                        and body.leader_epoch == h.epoch
                        and not body.vote_granted
                        and node_id not in h.told
                        and node_id not in h.outran
                    ):
                        if not h.outran:
                            self.world.extra["handovers_outran"] += 1
                        h.outran[node_id] = None
            if role == "LEADER" and observed.epoch > h.epoch:
                self._next_leader(h, node_id, observed.epoch)
        self._last_role[node_id] = role

    def _first_prevote(self, h: _Handover, node: SimNode, claim: tuple[int, int]) -> None:
        world = self.world
        h.prevote_ms = world.now_ms
        down = [v for v in world.voter_ids if not world.nodes[v].up]
        net = world.network
        if down or net.has_partitions or net.default.loss > 0.0:
            h.why_not = f"voters down {down}, partitions {net.has_partitions}, loss {net.default.loss}"
            return
        sent = self._sent.get((h.leader, node.node_id))
        if sent is not None and sent[0] == h.epoch and sent[1] > claim:
            # The leader had sent it more before resigning (the answer was still on its way).
            world.extra["handovers_answer_in_flight"] += 1
            h.in_flight = True
            claim = sent[1]
        for v in world.voter_ids:
            log = world.nodes[v].log
            theirs = (log.last_fetched_epoch(), log.end_offset())
            if theirs > claim:
                h.why_not = f"successor {node.node_id} claims {claim}, voter {v} has {theirs}"
                return
        h.checked = True
        deadline = world.now_ms + 2 * world.timing.election_timeout_ms + 1000

        def check() -> None:
            if self.current is h and not h.done:
                h.done = True
                world.extra["handovers_checked"] += 1
                world.report(
                    "FirstSuccessorWins",
                    f"leader {h.leader} resigned epoch {h.epoch} at t={h.started_ms}; its first successor "
                    f"{h.successor} pre-voted at t={h.prevote_ms} with an up-to-date log, but no leader "
                    f"was elected by t={deadline}",
                )

        world.schedule(deadline, "first-successor-wins", check)

    def _next_leader(self, h: _Handover, node_id: int, epoch: int) -> None:
        h.done = True
        won = node_id == h.successor and epoch == h.epoch + 1 and h.successor_rounds == 1
        if won:
            self.world.extra["handovers_first_successor_won"] += 1
        if h.checked:
            self.world.extra["handovers_checked"] += 1
        if h.checked and not won:
            races = ""
            if h.in_flight:
                races += "; the leader's last Fetch answer to it was still on its way"
            if h.outran:
                races += f"; voters {sorted(h.outran)} refused its pre-vote before the EndQuorumEpoch"
            self.world.report(
                "FirstSuccessorWins",
                f"leader {h.leader} resigned epoch {h.epoch} at t={h.started_ms}; its first successor "
                f"{h.successor} pre-voted at t={h.prevote_ms} with an up-to-date log over a healthy "
                f"network, but the next leader is {node_id} in epoch {epoch} (successor pre-vote "
                f"rounds: {h.successor_rounds}{races})",
            )


def _graceful_resign(world: World) -> None:
    # EndQuorumEpoch makes the first preferred successor campaign at once, but the hand-off can
    # fail legitimately (the successor is behind: a fetch response sent before the resignation is
    # still in flight, and a voter holding it refuses the successor's pre-vote), falling back to a
    # later successor or a fetch timeout: Liveness allows that. FirstSuccessorWins checks the
    # hand-off whenever the successor's log is up to date.
    bound = _leader_lost_bound(world)
    handover = FirstSuccessorWins(world)

    def step(leader: SimNode) -> None:
        handover.start(leader)
        if world.rng.random() < 0.5:
            world.resign(leader.node_id)
            world.checker.expect_progress(f"after leader {leader.node_id} resigned", bound)
        else:
            world.shutdown(leader.node_id)
            world.checker.expect_progress(f"after leader {leader.node_id} shut down", bound)
            _at(world, world.now_ms + 2000, "restart", lambda: world.restart(leader.node_id))
        if world.now_ms + 4000 < world.end_ms - bound:
            _at(world, world.now_ms + 4000, "resign", lambda: _when_leader(world, "resign", step))

    world.checker.expect_leader_by(6000)
    _at(world, 3000, "resign", lambda: _when_leader(world, "resign", step))
    end = world.end_ms
    _at(world, end - 3500, "caught-up", lambda: world.checker.expect_caught_up("after the last step", 3000))


def _kraft_upgrade(world: World) -> None:
    """A static quorum moves to dynamic voters (kraft.version 0 -> 1, Kafka 4.1) while its
    leader may crash right after writing the upgrade: the upgrade is retried until some leader's
    commits, and then every node must run kraft.version 1 with the voters' real directories."""
    crashes_left = 2

    def attempt() -> None:
        nonlocal crashes_left
        if world.now_ms > world.end_ms - 6000:
            return
        leader = world.current_leader()
        if leader is None or leader.raft.kraft_version >= KRAFT_VERSION_1:
            if leader is None or not _all_upgraded(world):
                world.schedule(world.now_ms + 300, "upgrade", attempt)
            return
        try:
            offset = leader.raft.upgrade_kraft_version(1, validate_only=False, now_ms=world.now_ms)
        except KraftError as e:
            world.trace(f"upgrade refused by {leader.node_id}: {e}")
            world.schedule(world.now_ms + 300, "upgrade", attempt)
            return
        world.trace(f"upgrade written by {leader.node_id} at offset {offset}")
        if crashes_left and world.rng.random() < 0.5:
            crashes_left -= 1
            victim = leader.node_id
            world.crash(victim)  # before the upgrade can commit, often
            _at(world, world.now_ms + 2500, "restart", lambda: world.restart(victim))
        world.schedule(world.now_ms + 300, "upgrade", attempt)

    def check() -> None:
        for node in world.nodes.values():
            if not node.up or node.node_id not in world.voter_ids:
                continue
            want = {ReplicaKey(v, world.nodes[v].directory_id) for v in world.voter_ids}
            got = set(node.raft.voter_set.keys())
            if node.raft.kraft_version != KRAFT_VERSION_1 or got != want:
                world.report(
                    "KRaftUpgrade",
                    f"node {node.node_id} runs kraft.version {node.raft.kraft_version} with voters "
                    f"{sorted(map(str, got))} at the end, not 1 with {sorted(map(str, want))}",
                )

    world.checker.expect_leader_by(6000)
    _at(world, 2000, "upgrade", attempt)
    _at(world, world.end_ms - 1000, "check", check)


def _all_upgraded(world: World) -> bool:
    return all(n.raft.kraft_version >= KRAFT_VERSION_1 for n in world.nodes.values() if n.up)


def _snapshot_catchup(world: World) -> None:
    def down(leader: SimNode) -> None:
        followers = [v for v in world.voter_ids if v != leader.node_id]
        victim = world.rng.choice(followers)
        world.crash(victim)
        world.extra["lagging_voter"] = victim
        for o in world.observer_ids:
            world.crash(o)
        _at(world, world.now_ms + 6000, "restart", lambda: back(victim))

    def back(victim: int) -> None:
        world.restart(victim)
        for o in world.observer_ids:
            world.wipe(o)  # a brand-new replica: empty log, must start from the leader's snapshot
            world.restart(o)
        world.checker.expect_progress("after the lagging replicas return", _leader_lost_bound(world))
        world.checker.expect_caught_up("after the lagging replicas return", 5000)
        _at(world, world.now_ms + 5000, "caught-up", lambda: caught_up([victim, *world.observer_ids]))

    def caught_up(ids: list[int]) -> None:
        target = world.checker.committed_end
        loaded = 0
        for i in ids:
            node = world.nodes[i]
            sm = node.sm
            if sm is None:
                continue
            loaded += sm.snapshots_loaded
            if node.log.end_offset() < world.nodes[i].log.start_offset() or sm.next_offset + 200 < target:
                world.report(
                    "Liveness",
                    f"node {i} did not catch up within 5000 ms: applied to {sm.next_offset}, "
                    f"committed {target}",
                )
        world.extra["snapshots_loaded_by_lagging"] = loaded

    world.checker.expect_leader_by(6000)
    _at(world, 2500, "down", lambda: _when_leader(world, "down", down))


def _observer(world: World) -> None:
    bound = _leader_lost_bound(world)

    def crash_leader(leader: SimNode) -> None:
        world.crash(leader.node_id)
        world.checker.expect_progress("after crashing the leader", bound)

        def restart() -> None:
            world.restart(leader.node_id)
            world.checker.expect_caught_up("after the leader restarted", 5000)

        _at(world, world.now_ms + 2000, "restart", restart)

    def bounce_observer() -> None:
        victim = world.rng.choice(world.observer_ids)
        world.crash(victim)
        _at(world, world.now_ms + 1000, "restart-observer", lambda: world.restart(victim))

    def caught_up() -> None:
        target = world.checker.committed_end
        for o in world.observer_ids:
            sm = world.nodes[o].sm
            if sm is None or sm.next_offset + 200 < target:
                world.report(
                    "Liveness",
                    f"observer {o} applied to {sm.next_offset if sm else None} but committed is {target}",
                )

    world.checker.expect_leader_by(6000)
    _at(world, 4000, "crash-leader", lambda: _when_leader(world, "crash-leader", crash_leader))
    if world.observer_ids:
        _at(world, 6000, "bounce-observer", bounce_observer)
        _at(world, world.end_ms - 1, "observers-caught-up", caught_up)


# Kafka's default controller.quorum.election.backoff.max.ms (1000), not the simulation's 100: the
# successor at position p > 0 waits (max >> (n - 1)) << (p - 1) ms (spec 3.6), 3 ms for the second
# of six successors with 100, less than one message delay here (2-7 ms), so it would race the
# first successor and FirstSuccessorWins would measure that timing, not the protocol. With 1000 it
# waits 31 ms (7 voters) / 125 ms (5 voters), longer than the first successor's election takes.
_HANDOVER_TIMING = Timing(election_backoff_max_ms=1000)


class ObserverFollowsViaBootstrap:
    """Named expectation **ObserverFollowsViaBootstrap** for observers that cannot reach the
    leader's advertised endpoint while its bootstrap address works.

    From ``grace_ms`` after the fault starts until it ends, at every check (each ``window_ms``)
    every observer that is up must have a high watermark larger than at the previous check (it
    replicates through the bootstrap address), and must have sent at most ``max_requests``
    requests in that window (no busy loop: one fetch in flight, each answered with new data, a
    long poll or an error that backs off).
    """

    def __init__(self, world: World, *, window_ms: int, max_requests: int) -> None:
        self.world = world
        self.window_ms = window_ms
        self.max_requests = max_requests
        self.sent: dict[int, int] = dict.fromkeys(world.observer_ids, 0)
        self.most_sent = 0
        world.extra["observer_max_requests_per_window"] = 0
        world.add_poll_watcher(self.on_poll)

    def on_poll(self, node: SimNode, outbound: Sequence[NodeEnvelope], observed: Observed) -> None:
        if node.node_id in self.sent and outbound:
            self.sent[node.node_id] += sum(1 for e in outbound if e.is_request)

    def watch(self, label: str, until_ms: int) -> None:
        world = self.world
        last_hw: dict[int, int] = {}

        def hw_of(o: int) -> int:
            node = world.nodes[o]
            hw = node.raft.high_watermark if node.up else None
            return -1 if hw is None else int(hw)

        def check() -> None:
            for o in world.observer_ids:
                count = self.sent[o]
                self.sent[o] = 0
                if count > world.extra["observer_max_requests_per_window"]:
                    world.extra["observer_max_requests_per_window"] = count
                if count > self.max_requests:
                    world.report(
                        "ObserverFollowsViaBootstrap",
                        f"{label}: observer {o} sent {count} requests in {self.window_ms} ms (at most "
                        f"{self.max_requests}): a busy loop",
                    )
                hw = hw_of(o)
                if o in last_hw and hw <= last_hw[o]:
                    world.report(
                        "ObserverFollowsViaBootstrap",
                        f"{label}: observer {o} high watermark stayed at {hw} for {self.window_ms} ms "
                        f"(committed prefix {world.checker.committed_end})",
                    )
                last_hw[o] = hw
            if world.now_ms + self.window_ms <= until_ms:
                world.schedule(world.now_ms + self.window_ms, "observer-window", check)

        for o in world.observer_ids:
            self.sent[o] = 0
            last_hw[o] = hw_of(o)
        world.schedule(world.now_ms + self.window_ms, "observer-window", check)


def _world_with_bootstrap_servers(**options: Any) -> World:
    return World(bootstrap_servers=True, **options)


def _observer_bootstrap(world: World) -> None:
    # Every node is configured with controller.quorum.bootstrap.servers (voter v's second address
    # is bootstrap id -1 - v). For 9 s the observers cannot reach the leader's advertised endpoint
    # while its bootstrap address works. Drawn per seed: the endpoint refuses connections (nothing
    # listens there: each request fails after a round trip) or it is black-holed (an unroutable
    # advertised listener: the requests vanish and time out).
    t = world.timing
    grace_ms = t.fetch_timeout_ms + 1500  # notice the silence (one fetch timeout), then find the leader
    fault_ms = 9000
    expectation = ObserverFollowsViaBootstrap(world, window_ms=1000, max_requests=60)

    def cut(leader: SimNode) -> None:
        refuse = world.rng.random() < 0.5
        for o in world.observer_ids:
            world.network.block_endpoint(o, leader.node_id, refuse=refuse)
        world.extra.setdefault("unreachable_leaders", []).append(leader.node_id)
        world.extra["endpoint_refuses"] = refuse
        end = world.now_ms + fault_ms
        _at(
            world,
            world.now_ms + grace_ms,
            "observer-watch",
            lambda: expectation.watch(f"leader {leader.node_id} unreachable from the observers", end - 1),
        )
        _at(world, end, "heal", heal)

    def heal() -> None:
        world.network.heal()
        world.checker.expect_caught_up("after the advertised endpoint came back", 5000)

    world.checker.expect_leader_by(6000)
    _at(world, 3000, "cut", lambda: _when_leader(world, "cut", cut))


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("steady", "no faults: elect a leader and commit", 3, 0, 8000, _steady),
        Scenario("leader-crash", "crash the leader twice; restart it later", 3, 0, 19_000, _leader_crash),
        Scenario(
            "crash-restart-loop",
            "crash and restart random nodes (keeping a majority), kill all once",
            5,
            1,
            24_000,
            _crash_restart_loop,
        ),
        Scenario(
            "partition-leader", "isolate the leader twice, back to back", 3, 0, 19_000, _partition_leader
        ),
        Scenario(
            "partition-rejoin",
            "cut one follower off for 10 election timeouts, then heal",
            3,
            0,
            17_000,
            _partition_rejoin,
        ),
        Scenario(
            "kraft-upgrade",
            "a static quorum upgraded to kraft.version 1 while its leader may crash right after",
            3,
            1,
            16_000,
            _kraft_upgrade,
        ),
        Scenario(
            "zombie-leader",
            "cut the leader off the voters only; it must step down via check-quorum",
            3,
            1,
            16_000,
            _zombie_leader,
        ),
        Scenario(
            "flaky-network",
            "loss (retransmitted, as TCP), duplication, reordering, one-way and transient partitions,"
            " slow disks",
            5,
            0,
            18_000,
            _flaky_network,
        ),
        Scenario(
            "message-loss",
            "flaky-network with loss that drops messages for good",
            5,
            0,
            18_000,
            _message_loss,
        ),
        Scenario(
            "graceful-resign",
            "the leader resigns or shuts down cleanly, repeatedly",
            3,
            0,
            16_000,
            _graceful_resign,
        ),
        Scenario(
            "graceful-resign-5",
            "graceful-resign with 5 voters: the first preferred successor must win at once",
            5,
            0,
            24_000,
            _graceful_resign,
            _HANDOVER_TIMING,
        ),
        Scenario(
            "graceful-resign-7",
            "graceful-resign with 7 voters: the first preferred successor must win at once",
            7,
            0,
            24_000,
            _graceful_resign,
            _HANDOVER_TIMING,
        ),
        Scenario(
            "snapshot-catchup",
            "a voter down long enough to fall below the log start; a wiped observer",
            3,
            1,
            17_000,
            _snapshot_catchup,
            Timing(snapshot_every=10),
        ),
        Scenario(
            "observer",
            "observers follow through a leader crash and their own restart",
            3,
            2,
            14_000,
            _observer,
        ),
        Scenario(
            "observer-bootstrap",
            "observers cannot reach the leader's advertised endpoint; its bootstrap address works",
            3,
            2,
            16_000,
            _observer_bootstrap,
            # Fewer client appends (one every 100-200 ms): a healthy observer then sends a few
            # dozen fetches a second, far below a busy loop's one per round trip (~100/s).
            Timing(append_interval_min_ms=100, append_interval_max_ms=200),
            make_world=_world_with_bootstrap_servers,
        ),
        Scenario(
            "voter-changes",
            "KIP-853: add, remove and replace voters one at a time under crashes and partitions",
            3,
            2,
            34_000,
            dynamic_voters.voter_changes,
            make_world=dynamic_voters.DynamicVotersWorld,
        ),
        Scenario(
            "wiped-voter",
            "KIP-853: a wiped voter (new directory id) must not elect a lagging voter; then replaced",
            3,
            0,
            30_000,
            dynamic_voters.wiped_voter,
            make_world=dynamic_voters.DynamicVotersWorld,
        ),
    )
}


def all_scenarios() -> dict[str, Scenario]:
    """Every scenario: the raft ones above, then the controller ones
    (``kraft.sim.controller_scenarios``), then the data plane's (``kraft.sim.data_scenarios``)."""
    from kraft.sim.controller_scenarios import CONTROLLER_SCENARIOS
    from kraft.sim.data_scenarios import DATA_SCENARIOS

    return {**SCENARIOS, **CONTROLLER_SCENARIOS, **DATA_SCENARIOS}


def scenario_group(name: str) -> list[str]:
    """The scenario names ``name`` stands for: ``all``, ``raft``, ``controller``, ``data`` or one scenario.

    Raises:
        KeyError: an unknown name (the message names the known ones).
    """
    every = all_scenarios()
    if name == "all":
        return list(every)
    if name == "raft":
        return list(SCENARIOS)
    if name == "controller":
        return [n for n in every if n.startswith("controller-")]
    if name == "data":
        return [n for n in every if n.startswith("data-")]
    if name not in every:
        raise KeyError(f"unknown scenario {name!r}; known: all, raft, controller, data, {', '.join(every)}")
    return [name]


def build_world(
    name: str,
    seed: int,
    *,
    voters: int | None = None,
    observers: int | None = None,
    duration_ms: int | None = None,
    pre_vote: bool = True,
    timing: Timing | None = None,
) -> World:
    """A started world running scenario ``name`` (raises ``KeyError`` naming the known ones).

    ``timing`` replaces the scenario's timing (tests use it, e.g. to switch snapshots off).
    """
    every = all_scenarios()
    scenario = every.get(name)
    if scenario is None:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(every)}")
    options: dict[str, Any] = {
        "seed": seed,
        "voters": voters if voters is not None else scenario.voters,
        "observers": observers if observers is not None else scenario.observers,
        "timing": timing if timing is not None else scenario.timing,
        "pre_vote": pre_vote,
        "end_ms": duration_ms if duration_ms is not None else scenario.duration_ms,
    }
    world = scenario.make_world(**options) if scenario.make_world is not None else World(**options)
    world.extra["scenario"] = name
    world.start()
    scenario.setup(world)
    return world
