"""The simulated world: many real ``RaftNode``s in one process on virtual time, one seeded rng.

Owns the event queue, the nodes' durable state (log + election store, which survive crashes),
their volatile state (the ``RaftNode`` and its state machine, which do not), the network and the
disks. It must not hide anything from the core: every envelope, timer and fsync goes through
``RaftNode.poll`` exactly as a real shell would drive it.

Event loop (STYLE.md section 2)::

    at_ms, seq, kind, a, b = heappop(queue)     # ties broken by insertion order (seq)
    now_ms = at_ms; handle the event; check every invariant

Events: ``POLL`` (a node's ``wake_at_ms`` came, or a message arrived), ``DELIVER`` (a message
reaches its destination), ``ACTION`` (scenario steps, client appends, liveness checks).

Actors: participants that are not raft nodes (the controller simulation's brokers and admin client,
``kraft.sim.brokers``) register with ``add_actor``. They send through ``send`` like a node, get
their envelopes from the world (``Actor.receive``, with the same partition, loss and incarnation
rules) and run their own timers through ``schedule_actor``; they never call into a node.

Determinism: all randomness comes from ``random.Random(seed)`` (network, faults, scenario choices)
and per-node ``random.Random(f"{seed}:{node_id}")`` handed to the core; nothing iterates a set;
the trace hash covers every handled event, so two runs of a seed can be compared.

Connection model: an envelope belongs to the sender's and receiver's *incarnations* (a restart is
a new incarnation). A message whose sender or receiver restarted while it was in flight is
dropped on arrival, as a TCP connection reset would drop it; otherwise a fresh node could match a
stale response to a new request by correlation id.

Failed connections: where the real sender would see its connection fail, the world answers its raft
request with what ``kraft.net``'s channel gives the core then, a response of the request's type
carrying BROKER_NOT_AVAILABLE (``kraft.raft.rpc.error_response_for``), so the core backs off
``retry_backoff_ms`` instead of waiting out ``request_timeout_ms``. That is: a request arriving at
a stopped or restarted node (connection refused), or sent to an advertised endpoint that refuses
(``Network.block_endpoint``), and a request a node had received but not answered (or whose answer
was still in flight) when it stopped (connection reset). The answer leaves from the destination
and travels the reverse link like any message (delay, loss, partitions). A partition or a lost
message stays silent: the request times out, as on a real network. Requests of other kinds (the
brokers' controller requests) are dropped as before.
"""

from __future__ import annotations

import enum
import hashlib
import heapq
import random
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

from kraft.common.errors import FatalError, KraftError, NotLeaderError
from kraft.node.build import BrokerConfig, NodeConfig, NodeStorage, build_node
from kraft.node.node import Node, NodeEnvelope
from kraft.protocol.envelope import ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.config import QuorumConfig
from kraft.raft.listener import CommittedBatchCache
from kraft.raft.log import MemoryLog
from kraft.raft.messages import Envelope, RaftResponse
from kraft.raft.rpc import error_response_for
from kraft.raft.store import ElectionState, MemoryElectionStore
from kraft.raft.types import Endpoint, OffsetAndEpoch
from kraft.sim.disk import Disk, DiskProfile, SimLog, SimStore
from kraft.sim.network import LinkProfile, Network
from kraft.sim.state_machine import CounterStateMachine, StateLedger, encode_snapshot

EV_POLL = 0
EV_DELIVER = 1
EV_ACTION = 2

CLUSTER_ID = "kraft-sim-cluster-0000"


@dataclass(frozen=True, slots=True)
class Timing:
    """Quorum timing and workload; defaults are the simulation values of spec section 11."""

    election_timeout_ms: int = 1000
    election_backoff_max_ms: int = 100
    fetch_timeout_ms: int = 3000
    retry_backoff_ms: int = 50
    request_timeout_ms: int = 3000
    fetch_max_wait_ms: int = 100
    append_linger_ms: int = 0
    fetch_snapshot_max_bytes: int = 64  # small, to exercise chunked FetchSnapshot
    # Client workload: every [min, max] ms each ready leader appends ``records_per_append`` records.
    append_interval_min_ms: int = 10
    append_interval_max_ms: int = 30
    records_per_append: int = 2
    # The state machine snapshots every N applied data records (0 = never).
    snapshot_every: int = 20
    # Commit stalls longer than this count as unavailability (see World.unavailable_ms).
    stall_threshold_ms: int = 250


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str
    step: int
    at_ms: int
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "step": self.step, "at_ms": self.at_ms, "detail": self.detail}


NodeFactory = Callable[["World", "SimNode"], Node]
# Called after each poll with the polled node, what it sent and its state as read after the poll.
PollWatcher = Callable[["SimNode", Sequence[NodeEnvelope], "Observed"], None]


class Actor(Protocol):
    """A simulated participant that is not a raft node (a broker, an admin client).

    ``incarnation`` changes when the actor restarts: messages to or from an earlier incarnation are
    dropped on arrival, as for nodes. ``receive`` must not call into any node (it may ``send``)."""

    @property
    def actor_id(self) -> int: ...
    @property
    def incarnation(self) -> int: ...
    @property
    def up(self) -> bool: ...

    def receive(self, envelope: Any) -> None: ...


# id(enum member) -> (the member, its name). Keyed by identity: hashing an enum member runs Python
# code (Enum.__hash__) on every lookup. Only enum members (a handful of singletons) are kept, and the
# member is compared, so a recycled id cannot match.
_ROLE_NAMES: dict[int, tuple[Any, str]] = {}


def role_name(raft: Any) -> str:
    """The core's role as an upper-case name (``LEADER``, ``FOLLOWER``, ...)."""
    role = raft.role
    known = _ROLE_NAMES.get(id(role))
    if known is not None and known[0] is role:
        return known[1]
    name = str(getattr(role, "name", role)).upper()
    if isinstance(role, enum.Enum):
        _ROLE_NAMES[id(role)] = (role, name)
    return name


class Observed(NamedTuple):
    """A node's observable state as read once after its poll (for the trace and the checker)."""

    role: str
    epoch: int
    leader_id: int | None
    high_watermark: int | None
    end_offset: int


@dataclass(slots=True)
class SimNode:
    """One node: durable parts (log, store, disk) outlive incarnations; ``process`` (the running
    ``kraft.node.Node``, built by ``build_node``) and ``sm`` do not."""

    node_id: int
    is_voter: bool
    directory_id: uuid.UUID
    rng: random.Random
    log: SimLog
    store: SimStore
    disk: Disk
    process: Node | None = None
    sm: CounterStateMachine | None = None
    incarnation: int = 0
    inbox: list[Envelope] = field(default_factory=list)
    next_poll_at: int | None = None
    busy_until_ms: int = 0
    shutting_down: bool = False
    restarts: int = 0
    paused_until_ms: int = -1  # ``World.pause``: not polled before this time
    # The raft endpoints the node's next process advertises; None: its usual one (``endpoint_of``).
    # Set before a restart, it is a node back on another host or port (messages still find it by id).
    endpoints: tuple[Endpoint, ...] | None = None

    @property
    def up(self) -> bool:
        return self.process is not None

    @property
    def raft(self) -> Any:
        """The running raft core (a ``RaftNode``), or None while the node is down."""
        process = self.process
        return None if process is None else process.raft


def endpoint_of(node_id: int) -> Endpoint:
    return Endpoint("CONTROLLER", f"node{node_id}.sim", 9093)


def bootstrap_endpoint_of(node_id: int) -> Endpoint:
    """A voter's second address, listed in ``controller.quorum.bootstrap.servers``."""
    return Endpoint("CONTROLLER", f"bootstrap{node_id}.sim", 9093)


def _error_answer(request: Any) -> RaftResponse | None:
    """The body ``kraft.net``'s channel hands the core when the raft ``request`` cannot reach its
    destination, or None if the shell has none for it (a response, a KIP-853 voter change)."""
    if not isinstance(request, Envelope) or not request.is_request:
        return None
    try:
        return error_response_for(request.body, ErrorCode.BROKER_NOT_AVAILABLE)  # type: ignore[arg-type]
    except TypeError:  # a raft request with no error answer
        return None


def _failure_answer(request: Any, address: int) -> Any:
    """What the sender of ``request`` gets when its connection to ``address`` fails, as the server's
    shell hands it to the node: for a raft request, its error answer (``_error_answer``); for a
    request to a controller (``ControllerEnvelope``), an answer without a body. None: nothing."""
    if type(request) is ControllerEnvelope or type(request) is ClientEnvelope:
        if not request.is_request:
            return None
        return replace(request.reply(None), source=address)
    error = _error_answer(request)
    return None if error is None else Envelope(address, request.source, request.correlation_id, error)


def node_config(world: World, node: SimNode, **parts: Any) -> NodeConfig:
    """The configuration ``build_node`` gets for ``node`` in ``world`` (``parts``: the controller,
    quorum APIs or broker settings of the world's kind)."""
    t = world.timing
    dynamic = world.dynamic_voters
    quorum = QuorumConfig(
        # KIP-853 worlds keep the voters in the log (bootstrap checkpoint), not in the config.
        voters={} if dynamic else {v: (endpoint_of(v),) for v in world.voter_ids},
        # Bootstrap server i is voter i's second address: the core sends to it as id -2 - i.
        bootstrap_servers=tuple(bootstrap_endpoint_of(v) for v in world.bootstrap_targets.values()),
        election_timeout_ms=t.election_timeout_ms,
        fetch_timeout_ms=t.fetch_timeout_ms,
        election_backoff_max_ms=t.election_backoff_max_ms,
        append_linger_ms=t.append_linger_ms,
        request_timeout_ms=t.request_timeout_ms,
        retry_backoff_ms=t.retry_backoff_ms,
        fetch_max_wait_ms=t.fetch_max_wait_ms,
        fetch_snapshot_max_bytes=t.fetch_snapshot_max_bytes,
        pre_vote_enabled=world.pre_vote,
        check_quorum_enabled=True,
    )
    local: tuple[Endpoint, ...] = ()
    if node.endpoints is not None:
        local = node.endpoints
    elif node.is_voter or dynamic:
        local = (endpoint_of(node.node_id),)
    return NodeConfig(
        node_id=node.node_id,
        cluster_id=CLUSTER_ID,
        directory_id=node.directory_id,
        quorum=quorum,
        local_endpoints=local,
        **parts,
    )


def default_node_factory(world: World, node: SimNode, **parts: Any) -> Node:
    """A real node from ``node``'s durable state, built as a process builds it (``build_node``);
    the raft worlds' nodes are bare raft cores."""
    return build_node(
        node_config(world, node, **parts),
        world.node_storage(node),
        world.now_ms,
        node.rng,
        controller_rng=random.Random(f"{world.seed}:{node.node_id}:controller:{node.restarts}"),
        batch_cache=world.batch_cache,
    )


class World:
    """A seeded simulation of one cluster. Build, let a scenario schedule faults, then ``run``."""

    # KIP-853: voters in the log from a bootstrap checkpoint, not in the configuration
    # (``kraft.sim.dynamic_voters.DynamicVotersWorld``).
    dynamic_voters = False

    def __init__(
        self,
        *,
        seed: int,
        voters: int | Sequence[int] = 3,
        observers: int | Sequence[int] = 0,
        timing: Timing | None = None,
        pre_vote: bool = True,
        end_ms: int = 20_000,
        node_factory: NodeFactory | None = None,
        stop_on_violation: bool = True,
        link: LinkProfile | None = None,
        full_checks: bool = False,
        client_workload: bool = True,
        bootstrap_servers: bool | None = None,
    ) -> None:
        # A count gives the ids 1..voters, then the observers after them; a sequence, these ids.
        voter_ids = list(range(1, voters + 1)) if isinstance(voters, int) else list(voters)
        if isinstance(observers, int):
            if observers < 0:
                raise ValueError(f"observer count must not be negative, got {observers}")
            observer_ids = list(range(len(voter_ids) + 1, len(voter_ids) + observers + 1))
        else:
            observer_ids = list(observers)
        if not voter_ids:
            raise ValueError(f"need at least one voter, got {voters}")
        if len(set(voter_ids + observer_ids)) != len(voter_ids) + len(observer_ids):
            raise ValueError(f"node ids must be distinct: voters {voter_ids}, observers {observer_ids}")
        self.seed = seed
        self.rng = random.Random(seed)
        self.timing = timing if timing is not None else Timing()
        self.pre_vote = pre_vote
        self.end_ms = end_ms
        self.now_ms = 0
        self.step = 0
        self.events = 0
        self.stop_on_violation = stop_on_violation
        # Re-evaluate every invariant on every node after every event instead of what the event
        # could have changed: slower, same verdicts (tests compare the two).
        self.full_checks = full_checks
        self.node_factory: NodeFactory = node_factory if node_factory is not None else default_node_factory
        # The replicated counter (a state machine on every node plus the client appends). Off when
        # the nodes run their own state machine (the controller simulation).
        self.client_workload = client_workload
        self.actors: dict[int, Actor] = {}
        self.network = Network(self.rng, link)
        self.ledger = StateLedger()
        # Every node's listener decodes the same committed batches: decode each once per world.
        self.batch_cache = CommittedBatchCache()
        self.voter_ids: list[int] = voter_ids
        self.observer_ids: list[int] = observer_ids
        # ``controller.quorum.bootstrap.servers`` (every node gets the same list): bootstrap id
        # (-2, -3, ...) -> the voter behind that address. Empty: none configured. A world of
        # dynamic voters has them unless told otherwise (its nodes find the voters through them).
        if bootstrap_servers is None:
            bootstrap_servers = self.dynamic_voters
        self.bootstrap_targets: dict[int, int] = (
            {-2 - i: v for i, v in enumerate(self.voter_ids)} if bootstrap_servers else {}
        )
        # A request delivered through a bootstrap address is answered on that connection: its
        # response leaves with the bootstrap id as source. Key: (responder, its incarnation,
        # requester, its incarnation, correlation id).
        self._answer_as: dict[tuple[int, int, int, int, int], int] = {}
        # Raft requests delivered to a node and not answered yet, the latest per connection (the core
        # keeps at most one request in flight per destination): (requester, its incarnation, the
        # address it sent to: node or bootstrap id) -> (the request as delivered, the responder's
        # incarnation). When the responder stops they fail (``_reset_connections``).
        self._pending: dict[tuple[int, int, int], tuple[Envelope, int]] = {}
        # Controller requests delivered and not answered yet: (requester, its incarnation,
        # responder, correlation id) -> (the request, the responder's incarnation).
        self._pending_api: dict[
            tuple[int, int, int, int], tuple[ControllerEnvelope | ClientEnvelope, int]
        ] = {}
        self.nodes: dict[int, SimNode] = {}
        for node_id in self.voter_ids + self.observer_ids:
            self.nodes[node_id] = self._make_node(node_id, node_id in self.voter_ids)
        self._queue: list[tuple[int, int, int, Any, Any]] = []
        self._seq = 0
        self._trace = hashlib.blake2b(digest_size=16)
        # Trace lines not hashed yet: hashing them in chunks gives the digest of hashing them one
        # by one (blake2b of the concatenation) at a fraction of the calls.
        self._trace_lines: list[str] = []
        self.violations: list[Violation] = []
        self.stopped = False
        self.extra: dict[str, Any] = {}  # scenario-specific figures for the report
        self.appends = 0
        self.append_errors = 0
        self.snapshots_created = 0
        self.crashes = 0
        # The nodes the running action called into, when the world knows them (its own client
        # workload); None while a scenario action runs: it may change any node.
        self._action_scope: list[SimNode] | None = None
        # What the last poll's trace line read from the polled node (None if the poll failed).
        self._observed: Observed | None = None
        # Scenario expectations that watch every poll (``add_poll_watcher``).
        self._poll_watchers: list[PollWatcher] = []
        # Checkers see the world after every handled event (kraft.sim.invariants).
        from kraft.sim.invariants import InvariantChecker

        self.checker = InvariantChecker(self)
        self._after_init()

    def _after_init(self) -> None:
        """A subclass's own set-up, run last in ``__init__``. (A hook rather than an ``__init__``
        that forwards ``**options``: mypyc compiles that forwarding wrong, passing the dict as an
        argument, and the compiled simulator could not build such a world.)"""

    # -- construction --------------------------------------------------------------------------

    @property
    def majority(self) -> int:
        return len(self.voter_ids) // 2 + 1

    def _make_node(self, node_id: int, is_voter: bool) -> SimNode:
        id_rng = random.Random(f"{self.seed}:{node_id}:directory")
        disk = Disk(random.Random(f"{self.seed}:{node_id}:disk"))
        return SimNode(
            node_id=node_id,
            is_voter=is_voter,
            directory_id=uuid.UUID(int=id_rng.getrandbits(128), version=4),
            rng=random.Random(f"{self.seed}:{node_id}"),
            log=SimLog(MemoryLog(), disk),
            store=SimStore(MemoryElectionStore(), disk),
            disk=disk,
        )

    def start(self) -> None:
        """Boot every node at time 0 (but those ``boots_at_start`` keeps down) and start the client
        workload."""
        for node in self.nodes.values():
            if self.boots_at_start(node):
                self._boot(node)
        if self.client_workload:
            self.schedule(
                self.rng.randint(0, self.timing.append_interval_max_ms), "client", self._client_tick
            )

    def node_storage(self, node: SimNode) -> NodeStorage:
        """The durable state ``build_node`` gets for ``node`` (a data world adds partition logs)."""
        return NodeStorage(node.log, node.store)

    def clean_stop(self, node_id: int) -> None:
        """A broker's process is about to stop cleanly (a data world flushes its partition logs)."""

    def broker_settings(self, settings: BrokerConfig) -> BrokerConfig:
        """A broker's ``BrokerConfig`` as this world wants it (a data world sets replication)."""
        return settings

    def boots_at_start(self, node: SimNode) -> bool:
        """Whether ``start`` boots ``node`` (a subclass may start some later itself)."""
        return True

    def add_poll_watcher(self, watcher: PollWatcher) -> None:
        """Let a scenario expectation see every poll: the node, its outbound envelopes and its
        observed state. A watcher reads and may ``report``; it must not call into a node or
        draw from the world's rng (the trace must not depend on who watches)."""
        self._poll_watchers.append(watcher)

    def add_actor(self, actor: Actor) -> None:
        """Let ``actor`` send and receive on the network under its own id."""
        actor_id = actor.actor_id
        if actor_id in self.nodes or actor_id in self.actors:
            raise ValueError(f"id {actor_id} is taken")
        self.actors[actor_id] = actor

    def _boot(self, node: SimNode) -> None:
        node.process = self.node_factory(self, node)
        if self.client_workload:
            node.sm = CounterStateMachine(
                node.node_id, self.ledger, snapshot_every=self.timing.snapshot_every
            )
            node.raft.register(node.sm)
        node.busy_until_ms = self.now_ms
        node.shutting_down = False
        self.request_poll(node, self.now_ms)

    # -- event queue ---------------------------------------------------------------------------

    def _push(self, at_ms: int, kind: int, a: Any, b: Any) -> None:
        seq = self._seq = self._seq + 1
        heapq.heappush(self._queue, (at_ms, seq, kind, a, b))

    def schedule(self, at_ms: int, label: str, action: Callable[[], None]) -> None:
        """Run ``action`` at virtual time ``at_ms`` (never in the past)."""
        self._push(max(at_ms, self.now_ms), EV_ACTION, label, action)

    def schedule_actor(self, at_ms: int, label: str, action: Callable[[], None]) -> None:
        """Run an actor's own step at ``at_ms``: it calls into no node (it may read them and
        ``send``), so the checker has nothing to re-check after it."""

        def step() -> None:
            action()
            self._action_scope = []

        self.schedule(at_ms, label, step)

    def request_poll(self, node: SimNode, at_ms: int) -> None:
        """Make sure ``node`` is polled no later than ``at_ms`` (and not before its disk is idle)."""
        if node.process is None:  # not up
            return
        at_ms = max(at_ms, node.busy_until_ms, node.paused_until_ms, self.now_ms)
        next_poll_at = node.next_poll_at
        if next_poll_at is not None and next_poll_at <= at_ms:
            return
        node.next_poll_at = at_ms
        seq = self._seq = self._seq + 1  # _push, inline: this runs after nearly every event
        heapq.heappush(self._queue, (at_ms, seq, EV_POLL, node.node_id, node.incarnation))

    def run(self) -> None:
        """Process events until ``end_ms``, the queue runs dry, or a violation stops the run; then
        the end-of-run checks."""
        self._process(None)
        if not self.stopped:
            self.now_ms = max(self.now_ms, self.end_ms)
            self.checker.at_end()

    def advance(self, until_ms: int) -> None:
        """Process every event due by ``until_ms`` (``end_ms`` aside), then stand at ``until_ms``
        (unless a violation stopped the world): for a driver that looks at the world between steps,
        as a test does. Every event is handled and checked as in ``run``; the end-of-run checks
        are ``run``'s alone."""
        self._process(until_ms)
        if not self.stopped:
            self.now_ms = max(self.now_ms, until_ms)

    def next_event_ms(self) -> int | None:
        """When the next queued event is due (None: nothing is queued). It may turn out to be no
        event (a superseded poll)."""
        return self._queue[0][0] if self._queue else None

    def _process(self, until_ms: int | None) -> None:
        """The event loop: events due by ``until_ms`` (None: by ``end_ms``, read at every event, since
        a scenario may extend it)."""
        queue = self._queue
        checker = self.checker
        nodes = self.nodes
        heappop = heapq.heappop
        # Without stop_on_violation a standing violation is re-reported after every event: full checks.
        incremental = not self.full_checks and self.stop_on_violation
        while queue and not self.stopped:
            at_ms, _seq, kind, a, b = queue[0]
            if at_ms > (self.end_ms if until_ms is None else until_ms):
                break
            heappop(queue)
            if kind == EV_POLL:
                # A poll superseded by an earlier one, or of a node that died since, is no event:
                # drop it here, before any other work (the same test ``_handle_poll`` starts with).
                node = nodes[a]
                if node.next_poll_at != at_ms or node.incarnation != b or node.process is None:
                    self.now_ms = at_ms
                    continue
            self.now_ms = at_ms
            try:
                if kind == EV_POLL:
                    self._observed = None
                    handled = self._handle_poll(a, b)
                elif kind == EV_DELIVER:
                    handled = self._handle_deliver(a, b)
                else:
                    self._trace_event(f"A|{a}")
                    self._action_scope = None  # unknown: the action may change any node
                    b()
                    handled = True
            except FatalError as e:
                self.report("FatalError", f"{type(e).__name__}: {e}")
                handled = True
            except Exception as e:  # a crash of the core fails the seed, reported with where it happened
                where = traceback.extract_tb(e.__traceback__)[-1]
                self.report(
                    "CoreException",
                    f"{type(e).__name__}: {e} (at {where.filename}:{where.lineno} in {where.name})",
                )
                handled = True
            if not handled:
                continue
            self.events += 1
            self.step += 1
            # Every invariant is checked after every event; the checker re-evaluates what the event
            # could have changed (see InvariantChecker.after_event): a poll changes only the polled
            # node, a delivery only fills an inbox, an action may change anything. Without
            # stop_on_violation a standing violation is re-reported after every event, as always.
            if not incremental:
                checker.after_event()
            elif kind == EV_POLL:
                checker.after_event(nodes[a], observed=self._observed)
            elif kind == EV_DELIVER:
                checker.after_idle_event()
            else:
                checker.after_event(self._action_scope)
            if self.violations and self.stop_on_violation:
                self.stopped = True

    def report(self, invariant: str, detail: str) -> None:
        self.violations.append(Violation(invariant, self.step, self.now_ms, detail))

    @property
    def trace_hash(self) -> str:
        self._flush_trace()
        return self._trace.hexdigest()

    def _trace_event(self, text: str) -> None:
        lines = self._trace_lines
        lines.append(f"{self.now_ms}|{text}\n")
        if len(lines) >= 256:
            self._flush_trace()

    def _flush_trace(self) -> None:
        if self._trace_lines:
            self._trace.update("".join(self._trace_lines).encode())
            self._trace_lines.clear()

    def trace(self, text: str) -> None:
        """Add an actor's or scenario's own step to the trace hash (one line, at the current time)."""
        self._trace_event(text)

    # -- polling and delivery ------------------------------------------------------------------

    def _handle_poll(self, node_id: int, incarnation: int) -> bool:
        node = self.nodes[node_id]
        now_ms = self.now_ms
        process = node.process
        if process is None or node.incarnation != incarnation or node.next_poll_at != now_ms:
            return False  # superseded by an earlier poll, or the node died
        if node.paused_until_ms > now_ms:
            node.next_poll_at = None
            self.request_poll(node, node.paused_until_ms)
            return False
        raft = process.raft
        node.next_poll_at = None
        sm = node.sm
        if sm is not None and sm.snapshot_due is not None:  # (nothing due: _maybe_snapshot is a no-op)
            self._maybe_snapshot(node)
        inbound, node.inbox = node.inbox, []
        result = process.poll(now_ms, inbound)
        bill_ms = node.disk.take_bill_ms()
        depart_ms = now_ms + bill_ms
        node.busy_until_ms = depart_ms
        outbound = result.outbound
        send = self.send
        for envelope in outbound:
            send(envelope, depart_ms)
        role = role_name(raft)
        epoch = raft.epoch
        leader_id = raft.leader_id
        hw = raft.high_watermark
        end = node.log.end_offset()
        lines = self._trace_lines  # _trace_event, inline: this runs after every poll
        lines.append(
            f"{now_ms}|P|{node_id}|{role}|{epoch}|{leader_id}|{hw}|{end}|{len(inbound)}|{len(outbound)}|{bill_ms}\n"
        )
        if len(lines) >= 256:
            self._flush_trace()
        # Nothing below changes the node before the checker runs: it may use these readings.
        observed = self._observed = Observed(role, int(epoch), leader_id, hw, end)
        for watcher in self._poll_watchers:
            watcher(node, outbound, observed)
        if node.shutting_down and raft.is_shutdown_complete(self.now_ms):
            self._trace_event(f"S|{node_id}")
            node.log.flush()  # a clean shutdown closes (and so flushes) the log
            node.disk.take_bill_ms()
            self._stop(node)
            return True
        self.request_poll(node, max(int(result.wake_at_ms), self.now_ms + 1))
        return True

    def send(self, envelope: Any, depart_ms: int) -> None:
        source = self.nodes.get(envelope.source)
        src_inc = source.incarnation if source is not None else self._actor_incarnation(envelope.source)
        via: int | None = None
        if self.bootstrap_targets:
            if envelope.destination in self.bootstrap_targets:
                # Addressed to a bootstrap server: it reaches the voter behind that address.
                via = envelope.destination
                envelope = Envelope(
                    envelope.source, self.bootstrap_targets[via], envelope.correlation_id, envelope.body
                )
            elif self._answer_as and not envelope.is_request:
                requester = self.nodes.get(envelope.destination)
                key = (
                    envelope.source,
                    src_inc,
                    envelope.destination,
                    requester.incarnation if requester is not None else -1,
                    envelope.correlation_id,
                )
                answer_as = self._answer_as.pop(key, None)
                if answer_as is not None:
                    envelope = Envelope(
                        answer_as, envelope.destination, envelope.correlation_id, envelope.body
                    )
        destination = self.nodes.get(envelope.destination)
        if destination is not None:
            dst_inc = destination.incarnation
        else:
            actor = self.actors.get(envelope.destination)
            if actor is None:
                return  # unknown destination: nobody listens in the simulation
            dst_inc = actor.incarnation
        real_source = self.bootstrap_targets.get(envelope.source, envelope.source)
        if via is None and self.network.is_endpoint_unreachable(real_source, envelope.destination):
            network = self.network
            network.stats.sent += 1
            network.stats.dropped_endpoint += 1
            if network.endpoint_refuses(real_source, envelope.destination) and not network.is_blocked(
                real_source, envelope.destination
            ):
                # A refused connect: the refusal comes back after a round trip.
                answer = _failure_answer(envelope, envelope.destination)
                if answer is not None:
                    there_ms = depart_ms + network.draw_delay_ms(real_source, envelope.destination)
                    network.stats.refused += 1
                    self._send_error(envelope, answer, src_inc, there_ms)
            return
        for arrival in self.network.route(real_source, envelope.destination, depart_ms):
            self._push(arrival, EV_DELIVER, envelope, (src_inc, dst_inc, via))

    def _actor_incarnation(self, actor_id: int) -> int:
        actor = self.actors.get(actor_id)
        return actor.incarnation if actor is not None else -1

    def _handle_deliver(self, envelope: Any, incarnations: tuple[int | None, int, int | None]) -> bool:
        """``incarnations``: the sender's (None for an error answer the world made up: it belongs
        to no process), the receiver's and the bootstrap id the message was addressed to."""
        real_source = self.bootstrap_targets.get(envelope.source, envelope.source)
        source = self.nodes.get(real_source)
        destination = self.nodes.get(envelope.destination)
        if destination is None:
            return self._deliver_to_actor(envelope, incarnations)
        src_inc = incarnations[0]
        source_gone = src_inc is not None and (
            source.incarnation != src_inc
            if source is not None
            else self._actor_incarnation(envelope.source) != src_inc
        )
        if source_gone or destination.incarnation != incarnations[1] or not destination.up:
            self.network.stats.dropped_dead += 1
            if not source_gone:
                self._refuse(envelope, incarnations, real_source)
            return False
        if self.network.is_blocked(real_source, envelope.destination):
            self.network.stats.dropped_partition += 1
            return False
        self.network.stats.delivered += 1
        via = incarnations[2]
        if isinstance(envelope, Envelope):
            if src_inc is not None and envelope.is_request:
                address = envelope.destination if via is None else via
                self._pending[(envelope.source, src_inc, address)] = (envelope, incarnations[1])
            elif self._pending:
                self._answered(envelope, incarnations[1])
        elif type(envelope) is ControllerEnvelope or type(envelope) is ClientEnvelope:
            self._note_controller_request(envelope, incarnations)
        if via is not None and src_inc is not None:  # (an error answer never comes via bootstrap)
            key = (
                destination.node_id,
                incarnations[1],
                envelope.source,
                src_inc,
                envelope.correlation_id,
            )
            self._answer_as[key] = via
        destination.inbox.append(envelope)
        lines = self._trace_lines  # _trace_event, inline: this runs for every delivery
        lines.append(
            f"{self.now_ms}|D|{envelope.source}>{envelope.destination}|{type(envelope.body).__name__}|"
            f"{envelope.correlation_id}\n"
        )
        if len(lines) >= 256:
            self._flush_trace()
        self.request_poll(destination, self.now_ms)
        return True

    def _deliver_to_actor(self, envelope: Any, incarnations: tuple[int | None, int, int | None]) -> bool:
        actor = self.actors[envelope.destination]
        source = self.nodes.get(envelope.source)
        src_inc = source.incarnation if source is not None else self._actor_incarnation(envelope.source)
        source_gone = incarnations[0] is not None and src_inc != incarnations[0]
        if source_gone or actor.incarnation != incarnations[1] or not actor.up:
            self.network.stats.dropped_dead += 1
            if not source_gone:
                self._refuse(envelope, incarnations, envelope.source)
            return False
        if self.network.is_blocked(envelope.source, envelope.destination):
            self.network.stats.dropped_partition += 1
            return False
        self.network.stats.delivered += 1
        if self._pending and isinstance(envelope, Envelope) and not envelope.is_request:
            self._answered(envelope, incarnations[1])
        elif type(envelope) is ControllerEnvelope or type(envelope) is ClientEnvelope:
            self._note_controller_request(envelope, incarnations)
        self._trace_event(
            f"D|{envelope.source}>{envelope.destination}|{type(envelope.body).__name__}|{envelope.correlation_id}"
        )
        actor.receive(envelope)
        return True

    # -- failed connections --------------------------------------------------------------------

    def _refuse(
        self, envelope: Any, incarnations: tuple[int | None, int, int | None], real_source: int
    ) -> None:
        """``envelope`` reached a stopped or restarted destination: a request is refused (unless the
        path there is cut: then nothing comes back) and the sender gets the error a round trip after
        it sent the request."""
        via = incarnations[2]
        address = envelope.destination if via is None else via
        answer = _failure_answer(envelope, address)
        if (
            answer is None
            or incarnations[0] is None
            or self.network.is_blocked(real_source, envelope.destination)
        ):
            return
        self.network.stats.refused += 1
        self._send_error(envelope, answer, incarnations[0], self.now_ms)

    def _answered(self, response: Envelope, requester_inc: int) -> None:
        """A response reached its requester: its request no longer waits on the connection."""
        key = (response.destination, requester_inc, response.source)
        pending = self._pending.get(key)
        if pending is not None and pending[0].correlation_id == response.correlation_id:
            del self._pending[key]

    def _note_controller_request(
        self, envelope: ControllerEnvelope | ClientEnvelope, incarnations: tuple[int | None, int, int | None]
    ) -> None:
        """Track a delivered Kafka API request (to a controller or a broker listener) until its
        answer is delivered: a crash of the node that took it fails it, as a lost connection fails
        a request in flight."""
        if envelope.is_request:
            if incarnations[0] is not None:
                key = (envelope.source, incarnations[0], envelope.destination, envelope.correlation_id)
                self._pending_api[key] = (envelope, incarnations[1])
        elif self._pending_api:
            key = (envelope.destination, incarnations[1], envelope.source, envelope.correlation_id)
            self._pending_api.pop(key, None)

    def _reset_connections(self, node: SimNode) -> None:
        """``node``'s process is gone (called before its incarnation ends): its connections break.
        Each request it received and had not answered, or whose answer is still in flight (such
        messages are dropped on arrival), fails as ``kraft.net``'s channel fails a request whose
        connection closed; the requests it sent die with it."""
        for api_key, (api_request, responder_inc) in list(self._pending_api.items()):
            requester, requester_inc, responder, _ = api_key
            if responder == node.node_id and responder_inc == node.incarnation:
                del self._pending_api[api_key]
                answer = _failure_answer(api_request, responder)
                if answer is not None and self._is_current(requester, requester_inc):
                    self.network.stats.reset += 1
                    self._send_error(api_request, answer, requester_inc, self.now_ms)
            elif requester == node.node_id:
                del self._pending_api[api_key]
        if not self._pending:
            return
        for key, (request, responder_inc) in list(self._pending.items()):
            requester, requester_inc, address = key
            if request.destination == node.node_id and responder_inc == node.incarnation:
                del self._pending[key]
                answer = _failure_answer(request, address)
                if answer is not None and self._is_current(requester, requester_inc):
                    self.network.stats.reset += 1
                    self._send_error(request, answer, requester_inc, self.now_ms)
            elif requester == node.node_id:
                del self._pending[key]

    def _is_current(self, participant: int, incarnation: int) -> bool:
        node = self.nodes.get(participant)
        if node is not None:
            return node.up and node.incarnation == incarnation
        actor = self.actors.get(participant)
        return actor is not None and actor.up and actor.incarnation == incarnation

    def _send_error(self, request: Any, answer: Any, requester_inc: int, at_ms: int) -> None:
        """Send ``answer`` (``_failure_answer``: from the address the requester used) back from the
        request's destination to the requester, leaving at ``at_ms``: the reverse link's delay, loss
        and partitions apply."""
        for arrival in self.network.route(request.destination, request.source, at_ms):
            self._push(arrival, EV_DELIVER, answer, (None, requester_inc, None))

    # -- client workload and snapshots ---------------------------------------------------------

    def _client_tick(self) -> None:
        t = self.timing
        # Only schedule_append changes a node (observation reads nothing but properties), so the
        # checker re-checks exactly the nodes appended to.
        touched: list[SimNode] = []
        for node in self.nodes.values():
            raft = node.raft
            if raft is None or node.sm is None or node.shutting_down:
                continue
            # (The state machine test first: it is the cheaper one, and rules out the followers.)
            if node.sm.leader_epoch != raft.epoch or role_name(raft) != "LEADER":
                continue
            epoch = raft.epoch
            records = [
                f"n{node.node_id}e{epoch}#{self.appends + i}".encode() for i in range(t.records_per_append)
            ]
            touched.append(node)
            try:
                raft.schedule_append(epoch, records)
            except NotLeaderError:
                self.append_errors += 1
                continue
            except KraftError:
                # Back-pressure (too many pending batches) is an expected answer, not a bug.
                self.append_errors += 1
                continue
            self.appends += len(records)
            self.request_poll(node, self.now_ms)
        self.schedule(
            # randint's own call (the same draw)
            self.now_ms + self.rng.randrange(t.append_interval_min_ms, t.append_interval_max_ms + 1),
            "client",
            self._client_tick,
        )
        self._action_scope = touched

    def _maybe_snapshot(self, node: SimNode) -> None:
        """Snapshot what the state machine asked for during the previous poll (never re-entrantly)."""
        sm = node.sm
        if sm is None:
            return
        due = sm.take_snapshot_due()
        if due is None:
            return
        snapshot_id = OffsetAndEpoch(due.end_offset, due.epoch)
        if node.log.start_offset() >= due.end_offset:
            return
        writer = node.raft.create_snapshot(snapshot_id, due.last_timestamp_ms)
        if writer is None:
            return
        writer.append([encode_snapshot(due.count, due.digest, due.end_offset)])
        writer.freeze()
        self.snapshots_created += 1
        self._trace_event(f"N|{node.node_id}|{snapshot_id.offset}|{snapshot_id.epoch}")

    # -- faults --------------------------------------------------------------------------------

    def crash(self, node_id: int, *, counted: bool = True) -> None:
        """Kill the process: unflushed log bytes are lost, in-flight messages to/from it vanish.
        ``counted``: include it in ``crashes`` (the quorum's crashes; a broker's are its own)."""
        node = self.nodes[node_id]
        if not node.up:
            return
        self._trace_event(f"C|{node_id}")
        node.log.crash()
        self._stop(node)
        if counted:
            self.crashes += 1

    def pause(self, node_id: int, until_ms: int) -> None:
        """Stop polling ``node_id`` until ``until_ms`` (SIGSTOP: alive, its messages wait in its
        inbox, its timers fire late)."""
        node = self.nodes[node_id]
        if node.up:
            node.paused_until_ms = max(node.paused_until_ms, until_ms)
            self._trace_event(f"Z|{node_id}|{until_ms}")

    def _stop(self, node: SimNode) -> None:
        self._reset_connections(node)
        node.paused_until_ms = -1
        node.process = None
        node.sm = None
        node.inbox = []
        node.next_poll_at = None
        node.shutting_down = False
        node.incarnation += 1
        self.checker.node_stopped(node)

    def restart(self, node_id: int) -> None:
        """Start a fresh ``RaftNode`` (and state machine) from the node's log and election store."""
        node = self.nodes[node_id]
        if node.up:
            return
        self._trace_event(f"R|{node_id}")
        node.restarts += 1
        self._boot(node)
        self.checker.node_started(node)

    def shutdown(self, node_id: int, timeout_ms: int = 5000) -> None:
        """Graceful shutdown: the core resigns if leader; the node stops once shutdown completes."""
        node = self.nodes[node_id]
        if not node.up or node.shutting_down:
            return
        self._trace_event(f"G|{node_id}")
        node.raft.shutdown(self.now_ms, timeout_ms)
        node.shutting_down = True
        self.request_poll(node, self.now_ms)

    def resign(self, node_id: int) -> bool:
        node = self.nodes[node_id]
        if not node.up or role_name(node.raft) != "LEADER":
            return False
        self._trace_event(f"X|{node_id}")
        node.raft.resign(node.raft.epoch)
        self.request_poll(node, self.now_ms)
        return True

    def set_disk(self, node_id: int, profile: DiskProfile) -> None:
        self.nodes[node_id].disk.profile = profile

    def wipe(self, node_id: int) -> None:
        """Delete a stopped node's log and election state (a replaced disk)."""
        node = self.nodes[node_id]
        if node.up:
            raise ValueError(f"node {node_id} must be stopped before its disk is wiped")
        node.log.inner = MemoryLog()
        node.store.inner = MemoryElectionStore()
        self.checker.node_wiped(node)

    # -- observation ---------------------------------------------------------------------------

    def up_nodes(self) -> list[SimNode]:
        return [n for n in self.nodes.values() if n.up]

    def leaders(self) -> list[SimNode]:
        return [n for n in self.nodes.values() if n.up and role_name(n.raft) == "LEADER"]

    def current_leader(self) -> SimNode | None:
        """The leader with the highest epoch, if any node is leader."""
        best: SimNode | None = None
        for node in self.leaders():
            if best is None or node.raft.epoch > best.raft.epoch:
                best = node
        return best

    def stored_state(self, node_id: int) -> ElectionState | None:
        return self.nodes[node_id].store.read()
