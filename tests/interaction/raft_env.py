"""The commands of the raft transcripts: a tiny deterministic cluster of real ``RaftNode``s.

Every node has its own clock, which moves only on ``tick``; everything else (``deliver``,
``stabilize``) polls nodes at the time they are at, so no timer fires unless a transcript says
so. Messages wait in one ordered in-flight list until a command delivers or drops them. The nodes
are the sans-IO core over ``MemoryLog`` and ``MemoryElectionStore``, each with
``random.Random(f"{seed}:{node_id}")`` (``:restart`` appended after a crash), so a transcript
replays byte for byte. The command set is documented in README.md.

Nodes are built by ``make_node`` only, and observed through ``RaftEnv.raft`` only: a combined
``Node`` (raft, controller, broker) can replace the factory and the accessor without touching the
commands.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from transcript import Command, TranscriptError

from kraft.common.errors import KraftError
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.listener import CommittedBatch, SnapshotReader, SnapshotWriter
from kraft.raft.log import MemoryLog
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    Envelope,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftRpc,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.node import QuorumConfig, RaftNode
from kraft.raft.states import Role
from kraft.raft.store import MemoryElectionStore
from kraft.raft.types import Endpoint, LeaderAndEpoch, OffsetAndEpoch, ReplicaKey
from kraft.raft.voters import VoterNode, VoterSet
from kraft.records.batch import iter_batch_headers, iter_batches
from kraft.records.control import control_records

ADMIN = -100  # the source of the admin requests (add-voter, remove-voter)
CLUSTER_ID = "transcripts"
# Timers as Kafka's defaults, but no linger: a proposal is appended at the leader's next poll.
DEFAULT_CONFIG: dict[str, Any] = {"append_linger_ms": 0}


def endpoint(node_id: int) -> Endpoint:
    return Endpoint("CONTROLLER", f"node{node_id}", 9093)


def directory_id(node_id: int) -> uuid.UUID:
    return uuid.UUID(int=node_id + 100)


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """Everything a node is built from; its log and store outlive it (``crash`` rebuilds)."""

    node_id: int
    config: QuorumConfig
    log: MemoryLog
    store: MemoryElectionStore
    rng: random.Random
    now_ms: int
    local_endpoints: tuple[Endpoint, ...]


def make_node(spec: NodeSpec) -> RaftNode:
    """The one place a transcript node is built."""
    return RaftNode(
        node_id=spec.node_id,
        directory_id=directory_id(spec.node_id),
        cluster_id=CLUSTER_ID,
        config=spec.config,
        log=spec.log,
        store=spec.store,
        rng=spec.rng,
        now_ms=spec.now_ms,
        local_endpoints=spec.local_endpoints,
    )


class Values:
    """A state machine of opaque values: what a node's listener was handed, snapshots included."""

    def __init__(self) -> None:
        self.values: list[bytes] = []
        self.next_offset = 0

    def handle_commit(self, batch: CommittedBatch) -> None:
        self.values.extend(batch.records)
        self.next_offset = batch.last_offset + 1

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.values = list(reader.records())
        self.next_offset = reader.snapshot_id.offset

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        pass


# ---- printing ----------------------------------------------------------------------------------


def show_state(raft: RaftNode) -> str:
    state = raft.quorum.state
    parts = [f"epoch={state.epoch}"]
    leader = raft.leader_id
    if leader is not None and state.role not in (Role.LEADER, Role.RESIGNED):
        parts.append(f"leader={leader}")
    voted = raft.voted_key
    if voted is not None and state.role is not Role.CANDIDATE:
        parts.append(f"voted={voted.id}")
    return f"{state.role.name.capitalize()}({', '.join(parts)})"


def _leader(leader_id: int) -> str:
    return "none" if leader_id < 0 else str(leader_id)


def _offsets(records: bytes) -> str:
    headers = [h for _pos, h in iter_batch_headers(records)]
    return f"[{headers[0].base_offset}..{headers[-1].last_offset}]" if headers else "[]"


def _error(code: int) -> str:
    return "" if code == ErrorCode.NONE else f" error={ErrorCode(code).name}"


def show_body(body: RaftRpc) -> str:
    """One message in a line: its type and the fields that matter to the protocol."""
    match body:
        case VoteRequest():
            return (
                f"Vote pre_vote={str(body.pre_vote).lower()} epoch={body.candidate_epoch} "
                f"last=({body.last_offset_epoch}, {body.last_offset})"
            )
        case VoteResponse():
            granted = str(body.vote_granted).lower()
            return (
                f"VoteResponse epoch={body.leader_epoch} leader={_leader(body.leader_id)} granted={granted}"
                f"{_error(body.partition_error_code or body.error_code)}"
            )
        case BeginQuorumEpochRequest():
            return f"BeginQuorumEpoch epoch={body.leader_epoch}"
        case EndQuorumEpochRequest():
            successors = ", ".join(str(k.id) for k in body.preferred_candidates)
            return f"EndQuorumEpoch epoch={body.leader_epoch} successors=({successors})"
        case BeginQuorumEpochResponse() | EndQuorumEpochResponse():
            return (
                f"{type(body).__name__} epoch={body.leader_epoch} leader={_leader(body.leader_id)}"
                f"{_error(body.partition_error_code or body.error_code)}"
            )
        case FetchRequest():
            return (
                f"Fetch epoch={body.current_leader_epoch} offset={body.fetch_offset} "
                f"last_epoch={body.last_fetched_epoch}"
            )
        case FetchResponse():
            text = f"FetchResponse epoch={body.current_leader_epoch} leader={_leader(body.current_leader_id)}"
            text += f" hw={_hw(body.high_watermark)}"
            if body.records:
                text += f" records={_offsets(body.records)}"
            if body.diverging_epoch is not None and body.diverging_epoch.epoch >= 0:
                text += f" diverging=(epoch={body.diverging_epoch.epoch}, end={body.diverging_epoch.offset})"
            if body.snapshot_id is not None and body.snapshot_id.offset >= 0:
                text += f" snapshot=({body.snapshot_id.offset}, {body.snapshot_id.epoch})"
            return text + _error(body.partition_error_code or body.error_code)
        case FetchSnapshotRequest():
            sid = body.snapshot_id
            return (
                f"FetchSnapshot epoch={body.current_leader_epoch} snapshot=({sid.offset}, {sid.epoch}) "
                f"position={body.position}"
            )
        case FetchSnapshotResponse():
            sid = body.snapshot_id
            return (
                f"FetchSnapshotResponse snapshot=({sid.offset}, {sid.epoch}) size={body.size} "
                f"position={body.position} bytes={len(body.unaligned_records)}"
                f"{_error(body.partition_error_code or body.error_code)}"
            )
        case AddRaftVoterRequest():
            return f"AddRaftVoter voter={body.voter_key.id}"
        case RemoveRaftVoterRequest():
            return f"RemoveRaftVoter voter={body.voter_key.id}"
        case UpdateRaftVoterRequest():
            return f"UpdateRaftVoter voter={body.voter_key.id} epoch={body.current_leader_epoch}"
        case AddRaftVoterResponse() | RemoveRaftVoterResponse():
            return f"{type(body).__name__}{_error(body.error_code) or ' error=NONE'}"
        case UpdateRaftVoterResponse():
            return f"UpdateRaftVoterResponse epoch={body.leader_epoch}{_error(body.error_code)}"
    return type(body).__name__  # pragma: no cover (DescribeQuorum: not sent by transcripts)


def _hw(hw: int | None) -> str:
    return "none" if hw is None or hw < 0 else str(hw)


def _is_transition(line: str) -> bool:
    return " -> " in line and " log=" not in line and " hw=" not in line


def _name(node_id: int) -> str:
    return "admin" if node_id == ADMIN else str(node_id)


# ---- the environment ---------------------------------------------------------------------------


@dataclass(slots=True)
class InFlight:
    source: int  # the node that sent it
    target: int  # the node it is delivered to (a bootstrap address resolved)
    envelope: Envelope  # as the receiver sees it (a bootstrap address as the answer's source)

    def show(self) -> str:
        env = self.envelope
        address = env.destination if env.destination <= -2 and env.destination != ADMIN else env.source
        via = f" (via bootstrap {address})" if address <= -2 and address != ADMIN else ""
        return f"{_name(self.source)}->{_name(self.target)} {show_body(env.body)}{via}"


class RaftEnv:
    def __init__(self, seed: int = 0, factory: Callable[[NodeSpec], RaftNode] = make_node) -> None:
        self.seed = seed
        self.factory = factory
        self.specs: dict[int, NodeSpec] = {}
        self.nodes: dict[int, RaftNode] = {}
        self.clock: dict[int, int] = {}
        self.wake: dict[int, int] = {}
        self.values: dict[int, Values] = {}
        self.restarts: dict[int, int] = {}
        self.in_flight: list[InFlight] = []
        self.isolated: set[int] = set()
        self.bootstrap: list[int] = []  # bootstrap server i (destination -2 - i) is this node
        self._via: dict[tuple[int, int], int] = {}  # (requester, correlation id) -> bootstrap id
        self._admin_correlation = 0
        self._next_value = 1

    def raft(self, node_id: int) -> RaftNode:
        """The raft part of node ``node_id`` (the accessor to change for a combined Node)."""
        node = self.nodes.get(node_id)
        if node is None:
            raise TranscriptError(f"no node {node_id}")
        return node

    # ---- commands --------------------------------------------------------------------------

    def handle(self, command: Command) -> list[str]:
        handler = getattr(self, "cmd_" + command.name.replace("-", "_"), None)
        if handler is None:
            raise TranscriptError(f"{command.where}: unknown command {command.name!r}")
        try:
            lines: list[str] = handler(command)
        except KraftError as e:
            return [f"error: {type(e).__name__}: {e}"]
        return lines

    def cmd_add_nodes(self, c: Command) -> list[str]:
        """add-nodes N [voters=(..)] [kraft-version=1] [bootstrap=(..)] [config_field=value ...]"""
        count = c.int_arg(0)
        first = max(self.nodes, default=0) + 1
        voters = c.opt_ints("voters")
        dynamic = c.opt_int("kraft-version", 0) == 1
        if voters is None:
            if not self.specs:
                raise TranscriptError(f"{c.where}: the first add-nodes names the voters")
            config = next(iter(self.specs.values())).config
        else:
            options: dict[str, Any] = dict(DEFAULT_CONFIG)
            for key, value in c.options.items():
                if key not in ("voters", "kraft-version", "bootstrap"):
                    options[key] = int(value)
            self.bootstrap = c.opt_ints("bootstrap") or (voters if dynamic else [])
            options["bootstrap_servers"] = tuple(endpoint(n) for n in self.bootstrap)
            config = QuorumConfig(voters={} if dynamic else {v: () for v in voters}, **options)
        lines = []
        for node_id in range(first, first + count):
            log = MemoryLog()
            if dynamic and voters is not None and node_id in voters:
                # As `kraft storage format --initial-controllers` does: the bootstrap checkpoint.
                keys = VoterSet(VoterNode(ReplicaKey(v, directory_id(v)), (endpoint(v),)) for v in voters)
                raw = log.store_snapshot(OffsetAndEpoch(0, 0))
                SnapshotWriter(raw, 0, kraft_version=1, voters=keys).freeze()
            rng = random.Random(f"{self.seed}:{node_id}")
            self.specs[node_id] = NodeSpec(
                node_id, config, log, MemoryElectionStore(), rng, 0, (endpoint(node_id),) if dynamic else ()
            )
            self.clock[node_id] = 0
            self._start(node_id)
            kind = "voter" if self.raft(node_id).is_voter else "observer"
            lines.append(f"{node_id} {show_state(self.raft(node_id))} ({kind})")
        return lines

    def cmd_tick(self, c: Command) -> list[str]:
        """tick ID... ms=N: move the nodes' clocks and poll each (nothing is delivered)."""
        lines: list[str] = []
        for node_id in c.ints():
            self.clock[node_id] += c.opt_int("ms")
            lines += self._poll(node_id, [])
        return lines

    def cmd_deliver(self, c: Command) -> list[str]:
        """deliver ID: every message in flight to the node, in one poll."""
        return self._deliver(c.int_arg(0), lambda m: True)

    def cmd_deliver_msgs(self, c: Command) -> list[str]:
        """deliver-msgs ID [type=Name] [from=ID]: only those messages, in one poll."""
        kind, source = c.options.get("type"), c.options.get("from")

        def wanted(m: InFlight) -> bool:
            if kind is not None and show_body(m.envelope.body).split()[0] != kind:
                return False
            return source is None or _name(m.source) == source

        return self._deliver(c.int_arg(0), wanted)

    def cmd_drop(self, c: Command) -> list[str]:
        """drop A->B [type=Name]: lose the messages in flight from A to B."""
        source, _, target = c.args[0].partition("->")
        kind = c.options.get("type")
        lines = []
        for m in list(self.in_flight):
            if (
                _name(m.source) == source
                and _name(m.target) == target
                and (kind is None or show_body(m.envelope.body).split()[0] == kind)
            ):
                self.in_flight.remove(m)
                lines.append(f"dropped {m.show()}")
        return lines

    def cmd_isolate(self, c: Command) -> list[str]:
        """isolate ID...: messages sent to or by these nodes from now on are lost."""
        self.isolated.update(c.ints())
        return []

    def cmd_heal(self, c: Command) -> list[str]:
        """heal [ID...]: undo isolate (all nodes without arguments)."""
        self.isolated.difference_update(c.ints() if c.args else set(self.isolated))
        return []

    def cmd_stabilize(self, c: Command) -> list[str]:
        """stabilize [brief]: rounds of delivering every message in flight (and polling nodes
        whose wake time has come) until nothing is in flight and no node is due; ``brief`` prints
        only the state transitions (and the answers to the admin)."""
        lines = self._stabilize(c)
        if "brief" in c.args:
            return [line for line in lines if _is_transition(line) or "->admin " in line]
        return lines

    def _stabilize(self, c: Command) -> list[str]:
        lines: list[str] = []
        for _ in range(200):
            due = [n for n in sorted(self.nodes) if self.wake[n] <= self.clock[n]]
            targets = sorted({m.target for m in self.in_flight} | set(due))
            if not targets:
                return lines
            batch, self.in_flight = self.in_flight, []
            for node_id in targets:
                inbound = [m.envelope for m in batch if m.target == node_id]
                polled = self._poll(node_id, inbound)
                if inbound:
                    lines.append(f"> {node_id} receives {len(inbound)} message{'s' * (len(inbound) != 1)}")
                elif polled:
                    lines.append(f"> {node_id} wakes")
                lines += polled
        raise TranscriptError(f"{c.where}: not stable after 200 rounds")

    def cmd_propose(self, c: Command) -> list[str]:
        """propose ID records=N: the leader appends N values (v1, v2, ... across the transcript)."""
        node_id = c.int_arg(0)
        raft = self.raft(node_id)
        count = c.opt_int("records", 1)
        values = [b"v%d" % (self._next_value + i) for i in range(count)]
        last = raft.schedule_append(raft.epoch, values)
        self._next_value += count
        self.wake[node_id] = self.clock[node_id]  # appended at its next poll
        return [f"{node_id} accepted {b' '.join(values).decode()} up to offset {last}"]

    def cmd_resign(self, c: Command) -> list[str]:
        """resign ID: the leader resigns its epoch; its next poll sends EndQuorumEpoch."""
        node_id = c.int_arg(0)
        raft = self.raft(node_id)
        before = show_state(raft)
        raft.resign(raft.epoch)
        self.wake[node_id] = self.clock[node_id]
        return [f"{node_id} {before} -> {show_state(raft)}"]

    def cmd_crash(self, c: Command) -> list[str]:
        """crash ID: unflushed log bytes and messages to the node are lost; it restarts at once."""
        node_id = c.int_arg(0)
        raft = self.raft(node_id)
        before, log_before = show_state(raft), self._log_position(node_id)
        lost = [m for m in self.in_flight if m.target == node_id]
        self.in_flight = [m for m in self.in_flight if m.target != node_id]
        self.specs[node_id].log.crash()
        self.restarts[node_id] = self.restarts.get(node_id, 0) + 1
        rng = random.Random(f"{self.seed}:{node_id}:{self.restarts[node_id]}")
        self.specs[node_id] = replace(self.specs[node_id], rng=rng, now_ms=self.clock[node_id])
        self._start(node_id)
        lines = [f"lost {m.show()}" for m in lost]
        lines.append(f"{node_id} {before} -> {show_state(self.raft(node_id))} (restarted)")
        if self._log_position(node_id) != log_before:
            lines.append(f"{node_id} log={log_before} -> {self._log_position(node_id)} (unflushed lost)")
        return lines

    def cmd_status(self, c: Command) -> list[str]:
        """status ID...: state, clock, high watermark, log, voters and what the listener applied."""
        lines = []
        for node_id in c.ints() or sorted(self.nodes):
            raft = self.raft(node_id)
            voters = ", ".join(str(v) for v in sorted(raft.voter_set.ids))
            lines.append(
                f"{node_id} {show_state(raft)} clock={self.clock[node_id]} hw={_hw(raft.high_watermark)} "
                f"log={self._log_position(node_id)} start={raft.log.start_offset()} voters=({voters}) "
                f"applied={len(self.values[node_id].values)}"
            )
        return lines

    def cmd_log(self, c: Command) -> list[str]:
        """log ID: the node's snapshot (if any) and batches: offsets, epoch, contents."""
        node_id = c.int_arg(0)
        log = self.specs[node_id].log
        lines = []
        snapshot = log.latest_snapshot_id()
        if snapshot is not None:
            lines.append(f"snapshot ({snapshot.offset}, {snapshot.epoch})")
        for batch in iter_batches(log.read(log.start_offset(), 1 << 30)):
            if batch.is_control:
                what = " ".join(kind.name for kind, _ in control_records(batch))
            else:
                what = " ".join((r.value or b"").decode() for r in batch.records)
            lines.append(
                f"[{batch.base_offset}..{batch.last_offset}] epoch={batch.partition_leader_epoch} {what}"
            )
        return lines or ["empty"]

    def cmd_snapshot(self, c: Command) -> list[str]:
        """snapshot ID: the node snapshots what its listener applied, up to its high watermark."""
        node_id = c.int_arg(0)
        raft, values = self.raft(node_id), self.values[node_id]
        end = values.next_offset
        epoch = next(
            h.partition_leader_epoch for _p, h in iter_batch_headers(raft.log.read(end - 1, 1 << 30))
        )
        writer = raft.create_snapshot(OffsetAndEpoch(end, epoch), 0)
        if writer is None:
            return [f"{node_id} has snapshot ({end}, {epoch}) already"]
        writer.append(values.values)
        writer.freeze()
        self.wake[node_id] = self.clock[node_id]  # its next poll may delete the log before it
        return [f"{node_id} snapshot ({end}, {epoch}) with {len(values.values)} values"]

    def cmd_add_voter(self, c: Command) -> list[str]:
        """add-voter LEADER ID: an admin asks the leader to add observer ID (KIP-853)."""
        voter = c.int_arg(1)
        request = AddRaftVoterRequest(
            cluster_id=CLUSTER_ID,
            timeout_ms=c.opt_int("timeout-ms", 30_000),
            voter_key=ReplicaKey(voter, directory_id(voter)),
            listeners=(endpoint(voter),),
        )
        return self._admin(c.int_arg(0), request)

    def cmd_remove_voter(self, c: Command) -> list[str]:
        """remove-voter LEADER ID: an admin asks the leader to remove voter ID (KIP-853)."""
        voter = c.int_arg(1)
        request = RemoveRaftVoterRequest(
            cluster_id=CLUSTER_ID, voter_key=ReplicaKey(voter, directory_id(voter))
        )
        return self._admin(c.int_arg(0), request)

    # ---- plumbing --------------------------------------------------------------------------

    def _start(self, node_id: int) -> None:
        self.nodes[node_id] = self.factory(self.specs[node_id])
        self.values[node_id] = Values()
        self.raft(node_id).register(self.values[node_id])
        self.wake[node_id] = self.clock[node_id]  # a new node acts at its first poll

    def _log_position(self, node_id: int) -> str:
        log = self.specs[node_id].log
        return f"({log.last_fetched_epoch()}, {log.end_offset()})"

    def _admin(self, leader: int, body: RaftRpc) -> list[str]:
        self._admin_correlation += 1
        message = InFlight(ADMIN, leader, Envelope(ADMIN, leader, self._admin_correlation, body))
        self.in_flight.append(message)
        return [message.show()]

    def _deliver(self, node_id: int, wanted: Callable[[InFlight], bool]) -> list[str]:
        chosen = [m for m in self.in_flight if m.target == node_id and wanted(m)]
        self.in_flight = [m for m in self.in_flight if m not in chosen]
        return self._poll(node_id, [m.envelope for m in chosen])

    def _poll(self, node_id: int, inbound: list[Envelope]) -> list[str]:
        raft = self.raft(node_id)
        before = (show_state(raft), self._log_position(node_id), raft.high_watermark)
        result = self.nodes[node_id].poll(self.clock[node_id], inbound)  # driven as a whole node
        self.wake[node_id] = result.wake_at_ms
        lines = []
        state, position, hw = show_state(raft), self._log_position(node_id), raft.high_watermark
        if state != before[0]:
            lines.append(f"{node_id} {before[0]} -> {state}")
        if position != before[1]:
            lines.append(f"{node_id} log={before[1]} -> {position}")
        if hw != before[2]:
            lines.append(f"{node_id} hw={_hw(before[2])} -> {_hw(hw)}")
        for env in result.outbound:
            lines.append(self._send(env))
        return lines

    def _send(self, env: Envelope) -> str:
        source, target = env.source, env.destination
        if env.is_request and target <= -2:
            self._via[(source, env.correlation_id)] = target
            target = self.bootstrap[-2 - target]
        elif not env.is_request:
            via = self._via.pop((target, env.correlation_id), None)
            if via is not None:  # the answer comes back from the address it was sent to
                env = Envelope(via, target, env.correlation_id, env.body)
        message = InFlight(source, target, env)
        text = message.show()
        if target == ADMIN:
            return text  # the admin reads it at once
        if target in self.isolated or source in self.isolated:
            return f"{text} (lost: isolated)"
        self.in_flight.append(message)
        return text
