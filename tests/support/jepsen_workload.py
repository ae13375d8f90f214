"""A Jepsen-style run of kraft's data plane against real processes (spec dataplane.md 8).

What it does, in order: starts 3 controllers and 3 brokers (``LocalCluster``), creates one topic
with replication factor 3 and ``min.insync.replicas=2``, then runs

* **producers** (confluent-kafka, acks=all, one thread each, paced): each sends unique values
  ``"<producer>-<counter>"`` round-robin over the partitions and records every delivery report, an
  acknowledged (partition, offset) or an error. Idempotence is off unless asked for, and then
  librdkafka's retries are off too; that does not stop it from resending a batch answered
  NOT_LEADER_OR_FOLLOWER (see ``jepsen_history.Duplicate.retry_shaped``), so without idempotence
  a duplicate may be a resend;
* **consumers** (confluent-kafka, ``assign`` of every partition from offset 0, no group) polling
  throughout and recording (partition, offset, value) in poll order. ``auto.offset.reset=error``:
  a consumer never moves by itself; an offset reset or a detected log truncation is recorded as a
  client error and the consumer seeks back to where it was (a recorded seek);
* **a nemesis** for ``seconds``: kill -9 a broker then restart it, SIGSTOP a broker then SIGCONT
  it, kill -9 the active controller then restart it; never more than one broker down at a time (two
  with ``harsh``) and never more than one controller;

then heals everything, waits for every partition to have a leader (Metadata through
confluent-kafka's AdminClient), produces a little longer, stops the producers, waits for the
in-sync replicas to be complete again, lets the consumers catch up and finally reads every
partition from offset 0 to its high watermark with a fresh consumer. The result is a
``jepsen_history.History``; ``jepsen_history.check`` judges it.

Times in the history are seconds since the workload started (``RunResult.wall_start`` is that
instant on the wall clock, the one the node logs use). The schedule of faults comes from the
seed; what the clients see also depends on timing, so a seed names a run, it does not replay it.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jepsen_history import (
    FINAL_READER,
    Ack,
    ClientError,
    Failure,
    History,
    NemesisEvent,
    PartitionObservation,
    Read,
    Seek,
)
from local_cluster import LocalCluster

from kraft.client.connection import AdminError

TOPIC = "jepsen"


@dataclass(frozen=True, slots=True, kw_only=True)
class JepsenConfig:
    """One run's shape. Times are seconds."""

    seconds: float = 60.0  # how long the nemesis acts
    seed: int = 0
    producers: int = 3
    consumers: int = 2
    partitions: int = 3
    rate_per_producer: float = 50.0  # values per second
    idempotence: bool = False
    harsh: bool = False  # allow two brokers down at once
    warmup_s: float = 3.0  # producing before the first fault
    recovery_s: float = 5.0  # producing after the heal
    fault_gap_s: tuple[float, float] = (0.5, 3.0)  # between two nemesis decisions
    fault_length_s: tuple[float, float] = (1.0, 6.0)  # how long one fault lasts
    heal_timeout_s: float = 60.0  # for leaders and complete in-sync replicas after the heal
    drain_timeout_s: float = 30.0  # for the consumers to reach the final high watermarks
    final_read_timeout_s: float = 60.0
    overrides: dict[str, str] = field(default_factory=dict)  # extra node properties


@dataclass(frozen=True, slots=True)
class Progress:
    """What the run reports to its caller about twice a second."""

    phase: str
    elapsed_s: float
    acked: int
    failed: int
    read: int  # reads and seeks
    down: tuple[str, ...]


@dataclass(slots=True)
class RunResult:
    history: History
    cluster: LocalCluster  # stopped; its logs stay readable (``cluster.log(node_id)``)
    wall_start: float
    partition_state: dict[int, tuple[int, tuple[int, ...]]]  # partition -> (leader, ISR) after the heal
    notes: list[str]  # what did not go as planned (a wait that timed out, a client that hung)


def _error_name(err: Any) -> str:
    try:
        return str(err.name())
    except (AttributeError, TypeError):
        return str(err)


class _Recorder:
    """Shared clock and the history's lists (appends from several threads: list.append is atomic)."""

    def __init__(self, start: float, history: History) -> None:
        self.start = start
        self.history = history

    def now_s(self) -> float:
        return time.monotonic() - self.start

    def client_error(self, client: str, err: Any) -> None:
        self.history.client_errors.append(ClientError(self.now_s(), client, f"{_error_name(err)}: {err}"))


class _ProducerThread(threading.Thread):
    def __init__(
        self, index: int, conf: dict[str, Any], partitions: int, rate: float, rec: _Recorder
    ) -> None:
        super().__init__(name=f"producer-{index}", daemon=True)
        from confluent_kafka import Producer

        self.index = index
        self.partitions = partitions
        self.interval_s = 1.0 / rate
        self.rec = rec
        self.stop = threading.Event()
        self.producer = Producer({**conf, "error_cb": lambda err: rec.client_error(self.name, err)})
        self.undelivered = 0
        self.fatal: str | None = None  # why librdkafka gave up (e.g. idempotence unsupported)

    def run(self) -> None:
        from confluent_kafka import KafkaException

        try:
            self._produce_until_stopped()
        except (KafkaException, SystemError) as e:  # SystemError: a callback saw the fatal error too
            self.fatal = str(e)

    def _produce_until_stopped(self) -> None:
        counter = 0
        next_at = time.monotonic()
        while not self.stop.is_set():
            value = f"{self.index}-{counter}"
            partition = (counter + self.index) % self.partitions
            try:
                self.producer.produce(
                    TOPIC, value=value.encode(), partition=partition, on_delivery=self._report
                )
                counter += 1
            except BufferError:  # the local queue is full: not sent, so the value may be reused
                pass
            next_at += self.interval_s
            # Serve delivery reports while waiting, so an ack is timed when it arrives.
            self.producer.poll(max(0.0, next_at - time.monotonic()))
            next_at = max(next_at, time.monotonic() - 1.0)  # after a stall, no burst of catch-up sends

    def finish(self, timeout_s: float) -> None:
        self.stop.set()
        self.join()
        if self.fatal is None:
            self.undelivered = self.producer.flush(timeout_s)

    def _report(self, err: Any, msg: Any) -> None:
        value, now_s = msg.value().decode(), self.rec.now_s()
        if err is None:
            offset = msg.offset()  # None: acknowledged without an offset (librdkafka's "unknown")
            self.rec.history.acks.append(
                Ack(now_s, self.index, value, msg.partition(), -1 if offset is None or offset < 0 else offset)
            )
        else:
            self.rec.history.failures.append(
                Failure(now_s, self.index, value, msg.partition(), _error_name(err))
            )


class _ConsumerThread(threading.Thread):
    """Polls every partition from offset 0 until told to stop; ``next_offsets`` is its position."""

    def __init__(self, name: str, conf: dict[str, Any], partitions: int, rec: _Recorder) -> None:
        super().__init__(name=name, daemon=True)
        from confluent_kafka import Consumer

        self.rec = rec
        self.partitions = partitions
        self.stop = threading.Event()
        self.consumer = Consumer(
            {
                **conf,
                "group.id": f"jepsen-{uuid.uuid4()}",  # librdkafka wants one; assign() needs no group
                "enable.auto.commit": False,
                "auto.offset.reset": "error",
                "error_cb": lambda err: rec.client_error(name, err),
            }
        )
        self.next_offsets = dict.fromkeys(range(partitions), 0)

    def run(self) -> None:
        try:
            self.assign_all()
            while not self.stop.is_set():
                self.poll_once(0.2)
        finally:
            self.consumer.close()

    def poll_once(self, timeout_s: float) -> None:
        from confluent_kafka import KafkaError, KafkaException

        msg: Any = self.consumer.poll(timeout_s)  # its partition/offset/value are set on a record
        if msg is None:
            return
        err = msg.error()
        if err is None:
            p, o = msg.partition(), msg.offset()
            self.rec.history.reads.append(Read(self.rec.now_s(), self.name, p, o, msg.value().decode()))
            self.next_offsets[p] = o + 1
            return
        self.rec.client_error(self.name, err)
        if err.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError._LOG_TRUNCATION):
            # The client gave up its position: put it back where it was, visibly.
            time.sleep(0.2)
            try:
                self.assign_all()
            except KafkaException as e:
                self.rec.client_error(self.name, e)

    def assign_all(self) -> None:
        from confluent_kafka import TopicPartition

        now_s = self.rec.now_s()
        for p in range(self.partitions):
            self.rec.history.reads.append(Seek(now_s, self.name, p, self.next_offsets[p]))
        self.consumer.assign([TopicPartition(TOPIC, p, self.next_offsets[p]) for p in range(self.partitions)])


def _ignore(_err: Any) -> None:
    """An ``error_cb`` for a client whose errors the history does not need."""


class _ObserverThread(threading.Thread):
    """Polls Metadata about twice a second and records each partition's leader and ISR changes
    (for the timeline: what the cluster said while the faults happened)."""

    def __init__(self, conf: dict[str, Any], partitions: int, rec: _Recorder) -> None:
        super().__init__(name="observer", daemon=True)
        from confluent_kafka.admin import AdminClient

        admin_conf: dict[str, Any] = {**conf, "error_cb": _ignore}
        self.admin = AdminClient(admin_conf)
        self.partitions = partitions
        self.rec = rec
        self.stop = threading.Event()

    def run(self) -> None:
        last: dict[int, tuple[int, tuple[int, ...]]] = {}
        while not self.stop.wait(0.5):
            state = partition_state(self.admin, self.partitions)
            for p, now in sorted((state or {}).items()):
                if last.get(p) != now:
                    last[p] = now
                    self.rec.history.partition_states.append(
                        PartitionObservation(self.rec.now_s(), p, now[0], now[1])
                    )


@dataclass(slots=True)
class _Fault:
    kind: str  # "kill-broker", "pause-broker", "kill-controller"
    node: int
    heal_at_s: float


class _Nemesis:
    """Starts and heals faults on ``cluster`` with the run's seed; records every action."""

    def __init__(self, cluster: LocalCluster, config: JepsenConfig, rec: _Recorder) -> None:
        self.cluster = cluster
        self.config = config
        self.rec = rec
        self.rng = random.Random(f"jepsen:{config.seed}")
        self.faults: list[_Fault] = []
        self.next_decision_s = 0.0

    @property
    def down(self) -> tuple[str, ...]:
        return tuple(f"{f.kind}:{f.node}" for f in self.faults)

    def step(self, now_s: float) -> None:
        """Heals what is due, then maybe starts one fault."""
        for fault in [f for f in self.faults if f.heal_at_s <= now_s]:
            self._heal(fault)
        if now_s < self.next_decision_s:
            return
        self.next_decision_s = now_s + self.rng.uniform(*self.config.fault_gap_s)
        length_s = self.rng.uniform(*self.config.fault_length_s)
        kind = self.rng.choice(("kill-broker", "pause-broker", "kill-controller"))
        if kind == "kill-controller":
            if any(f.kind == kind for f in self.faults):
                return
            node = self._active_controller()
            if node is None:
                return
        else:
            brokers_down = [f.node for f in self.faults if f.kind != "kill-controller"]
            if len(brokers_down) >= (2 if self.config.harsh else 1):
                return
            node = self.rng.choice([b for b in self.cluster.broker_ids if b not in brokers_down])
        self._start(_Fault(kind, node, now_s + length_s))

    def heal_all(self) -> None:
        for fault in list(self.faults):
            self._heal(fault)

    def _active_controller(self) -> int | None:
        running = [c for c in self.cluster.controller_ids if self.cluster.is_running(c)]
        try:
            leader = self.cluster.describe(running, timeout_ms=1_000).leader_id
        except (AdminError, OSError):
            return None
        return leader if leader in running else None

    def _start(self, fault: _Fault) -> None:
        if fault.kind == "pause-broker":
            self.cluster.pause(fault.node)
            action = "pause"
        else:
            self.cluster.kill(fault.node, signal.SIGKILL)
            action = "kill -9"
        role = "active controller" if fault.kind == "kill-controller" else "broker"
        self.rec.history.nemesis.append(NemesisEvent(self.rec.now_s(), action, fault.node, role))
        self.faults.append(fault)

    def _heal(self, fault: _Fault) -> None:
        if fault.kind == "pause-broker":
            self.cluster.resume(fault.node)
            action = "resume"
        else:
            self.cluster.start(fault.node)
            action = "restart"
        self.rec.history.nemesis.append(NemesisEvent(self.rec.now_s(), action, fault.node))
        self.faults.remove(fault)


def partition_state(admin: Any, partitions: int) -> dict[int, tuple[int, tuple[int, ...]]] | None:
    """partition -> (leader, ISR) from a broker's Metadata, or None if it did not answer."""
    from confluent_kafka import KafkaException

    try:
        md = admin.list_topics(TOPIC, timeout=2)
    except KafkaException:
        return None
    topic = md.topics.get(TOPIC)
    if topic is None or topic.error is not None or len(topic.partitions) != partitions:
        return None
    return {p.id: (p.leader, tuple(sorted(p.isrs))) for p in topic.partitions.values()}


def _led(admin: Any, partitions: int) -> dict[int, tuple[int, tuple[int, ...]]] | None:
    """``partition_state`` once every partition has a leader."""
    s = partition_state(admin, partitions)
    return s if s is not None and all(leader >= 0 for leader, _ in s.values()) else None


def run(
    config: JepsenConfig,
    workdir: Path,
    progress: Callable[[Progress], None] | None = None,
    client_log: Path | None = None,
) -> RunResult:
    """Runs the whole workload on a new cluster under ``workdir``; stops it before returning.
    librdkafka's own log lines go to ``client_log`` (default ``workdir/clients.log``)."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    rdkafka_log = logging.getLogger(f"jepsen.rdkafka.{uuid.uuid4().hex[:8]}")
    rdkafka_log.propagate = False
    workdir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(client_log or workdir / "clients.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    rdkafka_log.addHandler(handler)
    rdkafka_log.setLevel(logging.INFO)

    cluster = LocalCluster(workdir / "cluster", 3, overrides=config.overrides, brokers=3)
    notes: list[str] = []
    threads_p: list[_ProducerThread] = []
    threads_c: list[_ConsumerThread] = []
    observers: list[_ObserverThread] = []
    try:
        cluster.start_all()
        cluster.wait_for_leader(timeout_s=60)
        cluster.wait_for_brokers(timeout_s=60)
        common: dict[str, Any] = {"bootstrap.servers": cluster.bootstrap_servers(), "logger": rdkafka_log}
        admin = AdminClient(common)
        futures = admin.create_topics(
            [
                NewTopic(
                    TOPIC,
                    num_partitions=config.partitions,
                    replication_factor=3,
                    config={"min.insync.replicas": "2"},
                )
            ],
            operation_timeout=30,
            request_timeout=30,
        )
        futures[TOPIC].result(timeout=30)
        cluster.wait_for("every partition led", lambda: _led(admin, config.partitions), timeout_s=30)

        start = time.monotonic()
        wall_start = time.time()
        history = History(produce_start_s=0.0, produce_end_s=0.0)
        rec = _Recorder(start, history)
        nemesis = _Nemesis(cluster, config, rec)

        def report(phase: str) -> None:
            for p_thread in threads_p:
                if p_thread.fatal is not None:
                    raise RuntimeError(f"producer {p_thread.index} stopped: {p_thread.fatal}")
            if progress is not None:
                progress(
                    Progress(
                        phase,
                        rec.now_s(),
                        len(history.acks),
                        len(history.failures),
                        len(history.reads),
                        nemesis.down,
                    )
                )

        def wait(phase: str, seconds: float) -> None:
            until = rec.now_s() + seconds
            while (now := rec.now_s()) < until:
                report(phase)
                time.sleep(min(0.25, max(0.0, until - now)))

        producer_conf: dict[str, Any] = {
            **common,
            "acks": "all",
            "linger.ms": 5,
            "request.timeout.ms": 5_000,
            "message.timeout.ms": 15_000,
        }
        if config.idempotence:
            producer_conf["enable.idempotence"] = True
        else:
            # As few resends as librdkafka allows (it still resends after NOT_LEADER_OR_FOLLOWER).
            producer_conf.update({"enable.idempotence": False, "message.send.max.retries": 0})
        for i in range(config.consumers):
            threads_c.append(_ConsumerThread(f"c{i}", common, config.partitions, rec))
        for i in range(config.producers):
            threads_p.append(
                _ProducerThread(i, producer_conf, config.partitions, config.rate_per_producer, rec)
            )
        observer = _ObserverThread(common, config.partitions, rec)
        observers.append(observer)
        for t in [observer, *threads_c, *threads_p]:
            t.start()

        wait("warmup", config.warmup_s)
        nemesis_until = rec.now_s() + config.seconds
        while (now := rec.now_s()) < nemesis_until:
            nemesis.step(now)
            report("nemesis")
            time.sleep(0.1)
        nemesis.heal_all()
        report("heal")

        try:
            cluster.wait_for(
                "every partition led again",
                lambda: _led(admin, config.partitions),
                timeout_s=config.heal_timeout_s,
            )
        except AssertionError as e:
            notes.append(str(e).splitlines()[0])
        wait("recovery", config.recovery_s)
        history.produce_end_s = rec.now_s()
        for p_thread in threads_p:
            p_thread.finish(timeout_s=20)
            if p_thread.undelivered:
                notes.append(f"producer {p_thread.index}: {p_thread.undelivered} values never reported")

        def full_isr() -> dict[int, tuple[int, tuple[int, ...]]] | None:
            s = _led(admin, config.partitions)
            return s if s is not None and all(len(isr) == 3 for _, isr in s.values()) else None

        state: dict[int, tuple[int, tuple[int, ...]]] = {}
        try:
            state = cluster.wait_for("every ISR complete", full_isr, timeout_s=config.heal_timeout_s)
        except AssertionError as e:
            notes.append(str(e).splitlines()[0])
            state = _led(admin, config.partitions) or {}
        report("final-read")
        history.final_ends = _high_watermarks(common, config.partitions)

        def caught_up() -> bool:
            return all(c.next_offsets[p] >= end for c in threads_c for p, end in history.final_ends.items())

        deadline = time.monotonic() + config.drain_timeout_s
        while not caught_up() and time.monotonic() < deadline:
            report("drain")
            time.sleep(0.2)
        if not caught_up():
            behind = {
                c.name: {
                    p: (c.next_offsets[p], end)
                    for p, end in history.final_ends.items()
                    if c.next_offsets[p] < end
                }
                for c in threads_c
            }
            notes.append(
                f"consumers still behind the high watermarks after {config.drain_timeout_s:g} s "
                f"(partition: (position, end)): {behind}"
            )
        for c_thread in threads_c:
            c_thread.stop.set()
            c_thread.join(timeout=30)
        observer.stop.set()
        observer.join(timeout=10)
        _final_read(common, config, rec, history.final_ends, notes)
        report("done")
        return RunResult(history, cluster, wall_start, state, notes)
    finally:
        for p_thread in threads_p:
            p_thread.stop.set()
        for c_thread in threads_c:
            c_thread.stop.set()
        for o_thread in observers:
            o_thread.stop.set()
        cluster.stop_all()
        rdkafka_log.removeHandler(handler)
        handler.close()


def _high_watermarks(common: dict[str, Any], partitions: int) -> dict[int, int]:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({**common, "group.id": f"jepsen-{uuid.uuid4()}", "enable.auto.commit": False})
    try:
        out: dict[int, int] = {}
        for p in range(partitions):
            for attempt in range(20):
                try:
                    _low, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=5)
                    out[p] = high
                    break
                except KafkaException:
                    if attempt == 19:
                        raise
                    time.sleep(0.5)
        return out
    finally:
        consumer.close()


def _final_read(
    common: dict[str, Any], config: JepsenConfig, rec: _Recorder, ends: dict[int, int], notes: list[str]
) -> None:
    reader = _ConsumerThread(FINAL_READER, common, config.partitions, rec)
    deadline = time.monotonic() + config.final_read_timeout_s
    try:
        reader.assign_all()
        while any(reader.next_offsets[p] < end for p, end in ends.items()) and time.monotonic() < deadline:
            reader.poll_once(0.5)
    finally:
        reader.consumer.close()
    short = {p: (reader.next_offsets[p], end) for p, end in ends.items() if reader.next_offsets[p] < end}
    if short:
        notes.append(f"the final read stopped short (partition: (reached, end)): {short}")
