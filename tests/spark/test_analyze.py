"""``kraft analyze`` on the shared session: each transform on tiny hand-made record frames
(committed prefix by majority, leader changes and the quorum timeline, the PartitionChangeRecord
merge with -2/null "unchanged", ELR/LastKnownElr, ClearElr and topic removal, broker events and the
clean/unclean registration rule), then end to end on a real cluster that lives through a
controller failover, a broker killed and one stopped cleanly, both restarted.
"""

from __future__ import annotations

import io
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kraft.spark import analyze as A
from kraft.spark.columns import RECORD_DDL

# One worker runs every Spark test of a parallel run (`--dist loadgroup`): one SparkSession.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n"


def rec(
    offset: int,
    record_type: str | None = None,
    data: dict[str, Any] | None = None,
    *,
    epoch: int = 1,
    base: int | None = None,
    ms: int | None = None,
    node: int | None = 1,
    control: str | None = None,
    snapshot: bool = False,
) -> tuple[Any, ...]:
    """One row of the records table (``RECORD_DDL``)."""
    return (
        offset,
        epoch,
        offset if base is None else base,
        T0 + timedelta(milliseconds=offset * 10 if ms is None else ms),
        control is not None,
        control,
        record_type,
        0 if record_type else None,
        None,
        None,
        None if data is None else json.dumps(data),
        snapshot,
        node,
        "hand-made",
    )


def leader_change(offset: int, leader: int, epoch: int, granted: list[int], **kw: Any) -> tuple[Any, ...]:
    data = {
        "version": 0,
        "leaderId": leader,
        "voters": [{"voterId": v, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA"} for v in (1, 2, 3)],
        "grantingVoters": [{"voterId": v} for v in granted],
    }
    return rec(offset, None, data, epoch=epoch, control=A.LEADER_CHANGE, **kw)


def frame(spark: Any, rows: list[tuple[Any, ...]]) -> Any:
    return spark.createDataFrame(rows, RECORD_DDL)


def by(rows: list[Any], *keys: str) -> dict[Any, dict[str, Any]]:
    out = {}
    for r in rows:
        d = r.asDict()
        out[tuple(d[k] for k in keys) if len(keys) > 1 else d[keys[0]]] = d
    return out


# ------------------------------------------------------------------------------------------------
# Transforms on tiny frames


def test_committed_prefix_is_what_a_majority_of_voter_logs_hold_below_any_higher_epoch(spark: Any) -> None:
    # Node 1 led epoch 1 and appended offset 5 alone; nodes 2 and 3 hold epoch 2 from offset 5.
    # Node 4 (an observer) starts from a snapshot ending at offset 3.
    common = [rec(o, "NO_OP_RECORD", {}, epoch=1) for o in range(5)]
    rows = [*[(*r[:12], 1, r[13]) for r in common], rec(5, "NO_OP_RECORD", {}, epoch=1, node=1)]
    for n in (2, 3):
        rows += [(*r[:12], n, r[13]) for r in common]
        rows += [rec(o, "NO_OP_RECORD", {}, epoch=2, node=n) for o in (5, 6, 7)]
    rows += [rec(2, "TOPIC_RECORD", {"name": "t", "topicId": "T"}, node=4, snapshot=True)]
    rows += [rec(o, "NO_OP_RECORD", {}, epoch=1, node=4) for o in (3, 4)]
    records = frame(spark, rows)
    bounds = by(A.log_bounds(records, [1, 2, 3]).collect(), "node")
    assert {n: (b["log_start"], b["log_end"], b["committed_end"]) for n, b in bounds.items()} == {
        1: (0, 6, 5),  # offset 5 (epoch 1) is on node 1 only, and overtaken by epoch 2
        2: (0, 8, 8),
        3: (0, 8, 8),
        4: (3, 5, 5),
    }
    assert bounds[4]["snapshot_base"] == 2 and bounds[1]["snapshot_base"] is None
    assert [bounds[n]["voter"] for n in (1, 2, 3, 4)] == [True, True, True, False]
    logs = [A.NodeLog(**b) for b in bounds.values()]
    assert A.pick_reference(logs).node == 2  # longest committed; ties to the lowest voter id

    # Figure 8: (5, epoch 1) on a majority (1 and 2) but node 3 holds (5, epoch 2): not committed.
    fig8 = [(*r[:12], n, r[13]) for n in (1, 2, 3) for r in common]
    fig8 += [rec(5, "NO_OP_RECORD", {}, epoch=1, node=n) for n in (1, 2)]
    fig8 += [rec(5, "NO_OP_RECORD", {}, epoch=2, node=3)]
    judged = by(A.log_bounds(frame(spark, fig8), [1, 2, 3]).collect(), "node")
    assert {n: b["committed_end"] for n, b in judged.items()} == {1: 5, 2: 5, 3: 5}

    small = spark.createDataFrame(
        [(b.node, b.committed_end, b.snapshot_base) for b in logs],
        "node INT, committed_end BIGINT, snapshot_base BIGINT",
    )
    marked = A.mark_history(records, small, 4).collect()
    history = sorted((r["offset"], r["from_snapshot"]) for r in marked if r["in_history"])
    assert history == [(2, True), (3, False), (4, False)]  # node 4: its snapshot, then its log
    assert [r["committed"] for r in marked if r["node"] == 1 and r["offset"] == 5] == [False]
    unverified = A.mark_history(records, small, 2, verified=False).collect()
    assert {r["committed"] for r in unverified} == {None}


def test_leader_changes_and_quorum_timeline(spark: Any) -> None:
    node1 = [leader_change(0, 1, 1, [1, 2], ms=0)]
    node1 += [rec(o, "NO_OP_RECORD", {}, epoch=1, ms=o * 100) for o in range(1, 5)]
    rows = [*node1, rec(5, "NO_OP_RECORD", {}, epoch=1, ms=500)]  # node 1's uncommitted tail
    for n in (2, 3):
        rows += [(*r[:12], n, r[13]) for r in node1]
        rows += [
            leader_change(5, 2, 2, [2, 3], ms=1600, node=n),
            rec(6, "NO_OP_RECORD", {}, epoch=2, ms=1700, node=n),
            rec(7, "NO_OP_RECORD", {}, epoch=2, ms=2500, node=n),
        ]
    records = frame(spark, rows)
    history = records.where("node = 2")

    changes = sorted(A.leader_changes(history).collect(), key=lambda r: r["offset"])
    assert [(r["offset"], r["epoch"], r["leader"], r["previous_leader"]) for r in changes] == [
        (0, 1, 1, None),
        (5, 2, 2, 1),
    ]
    failover = changes[1].asDict()
    assert failover["voters"] == [1, 2, 3] and failover["granting_voters"] == [2, 3]
    assert failover["leader_changed"] and failover["gap_ms"] == 1200  # last epoch-1 record at 400 ms

    timeline = sorted(
        A.quorum_timeline(history, records, 1000, [1, 2, 3]).collect(), key=lambda r: r["bucket_start"]
    )
    got = [
        (r["records"], r["last_offset"], r["epoch"], r["leader"], r["leader_changes"], r["log_end"], r["lag"])
        for r in timeline
    ]
    assert got == [
        (5, 4, 1, 1, 1, {1: 6, 2: 5, 3: 5}, {1: 0, 2: 1, 3: 1}),  # node 1 appended offset 5 alone
        (2, 6, 2, 2, 1, {1: 6, 2: 7, 3: 7}, {1: 1, 2: 0, 3: 0}),
        (1, 7, 2, 2, 0, {1: 6, 2: 8, 3: 8}, {1: 2, 2: 0, 3: 0}),
    ]
    assert [r["max_lag"] for r in timeline] == [1, 1, 2]
    assert timeline[0]["bucket_end"] == timeline[1]["bucket_start"]
    alone = A.quorum_timeline(history, history, 1000, None).collect()
    assert {r["lag"] is None and r["log_end"] is None for r in alone} == {True}


def _partition(
    offset: int, topic: str, pid: int, replicas: list[int], leader: int, **kw: Any
) -> tuple[Any, ...]:
    data = {
        "partitionId": pid,
        "topicId": topic,
        "replicas": replicas,
        "isr": replicas,
        "removingReplicas": [],
        "addingReplicas": [],
        "leader": leader,
        "leaderEpoch": 0,
        "partitionEpoch": 0,
        "directories": [],
        **kw,
    }
    return rec(offset, A.PARTITION, data)


def _change(offset: int, topic: str, pid: int, **fields: Any) -> tuple[Any, ...]:
    return rec(offset, A.PARTITION_CHANGE, {"partitionId": pid, "topicId": topic, **fields})


def test_partition_changes_replay_the_merge_per_partition(spark: Any) -> None:
    rows = [
        rec(0, A.TOPIC, {"name": "a", "topicId": "AAA"}),
        _partition(1, "AAA", 0, [1, 2, 3], 1),
        _partition(2, "AAA", 1, [2, 3, 1], 2),
        _change(3, "AAA", 0, isr=[1, 2]),  # no Leader: unchanged, no leader epoch bump
        _change(4, "AAA", 0, isr=[1], leader=-2, replicas=None, eligibleLeaderReplicas=[2]),  # -2/null
        _change(5, "AAA", 0, isr=[], leader=-1, eligibleLeaderReplicas=[2, 1], lastKnownElr=[1]),
        _change(
            6,
            "AAA",
            0,
            isr=[2],
            leader=2,
            leaderRecoveryState=-1,
            eligibleLeaderReplicas=[1],
            lastKnownElr=[],
        ),
        rec(7, A.TOPIC, {"name": "b", "topicId": "BBB"}),
        _partition(8, "BBB", 0, [1], 1),
        rec(9, A.CLEAR_ELR, {"topicName": "a"}),  # a-0 has an ELR: cleared; a-1 has none: untouched
        _change(10, "AAA", 1, isr=[2], eligibleLeaderReplicas=[3]),
        rec(11, A.CLEAR_ELR, {"topicName": ""}),  # every topic: only a-1 has anything to clear
        rec(12, A.REMOVE_TOPIC, {"topicId": "BBB"}),
        _change(13, "CCC", 0, isr=[5]),  # no PartitionRecord for it in the history
    ]
    got = by(A.partition_changes(frame(spark, rows)).collect(), "topic_id", "partition", "offset")
    assert sorted(got) == sorted(
        [("AAA", 0, o) for o in (1, 3, 4, 5, 6, 9)]
        + [("AAA", 1, o) for o in (2, 10, 11)]
        + [("BBB", 0, 8), ("BBB", 0, 12), ("CCC", 0, 13)]
    )

    def state(key: tuple[str, int, int]) -> tuple[Any, ...]:
        r = got[key]
        return (r["leader"], r["leader_epoch"], r["partition_epoch"], r["isr"], r["elr"], r["last_known_elr"])

    assert [state(("AAA", 0, o)) for o in (1, 3, 4, 5, 6, 9)] == [
        (1, 0, 0, [1, 2, 3], [], []),
        (1, 0, 1, [1, 2], [], []),
        (1, 0, 2, [1], [2], []),  # Leader -2 and Replicas null: unchanged
        (-1, 1, 3, [], [2, 1], [1]),  # Leader -1 bumps the leader epoch
        (2, 2, 4, [2], [1], []),
        (2, 2, 5, [2], [], []),  # ClearElr: ELR and LastKnownElr emptied, leader epoch kept
    ]
    a0 = {o: got[("AAA", 0, o)] for o in (1, 3, 4, 5, 6, 9)}
    assert a0[4]["replicas"] == [1, 2, 3] and a0[4]["leader_recovery_state"] == 0
    assert (a0[3]["isr_removed"], a0[4]["isr_removed"], a0[4]["elr_added"]) == ([3], [2], [2])
    assert (a0[5]["leader_changed"], a0[5]["previous_leader"], a0[5]["elr_added"]) == (True, 1, [1])
    assert (a0[6]["elr_removed"], a0[6]["isr_added"], a0[6]["leader_changed"]) == ([2], [2], True)
    assert (a0[9]["cause"], a0[9]["elr_removed"], a0[9]["batch_base_offset"]) == (A.CLEAR_ELR, [1], 9)
    assert [state(("AAA", 1, o)) for o in (2, 10, 11)] == [
        (2, 0, 0, [2, 3, 1], [], []),
        (2, 0, 1, [2], [3], []),
        (2, 0, 2, [2], [], []),
    ]
    assert {r["topic"] for k, r in got.items() if k[0] == "AAA"} == {"a"}
    removed = got[("BBB", 0, 12)]
    assert (removed["cause"], removed["topic"], removed["isr"], removed["isr_removed"]) == (
        A.REMOVE_TOPIC,
        "b",
        None,
        [1],
    )
    orphan = got[("CCC", 0, 13)]
    assert (orphan["isr"], orphan["leader"], orphan["partition_epoch"], orphan["topic"]) == (
        [5],
        None,
        None,
        None,
    )


def _register(offset: int, broker: int, incarnation: str, **kw: Any) -> tuple[Any, ...]:
    data = {
        "brokerId": broker,
        "isMigratingZkBroker": False,
        "incarnationId": incarnation,
        "brokerEpoch": offset,
        "endPoints": [],
        "features": [],
        "rack": None,
        "fenced": True,
        "inControlledShutdown": False,
    }
    return rec(offset, A.REGISTER_BROKER, data, **kw)


def _broker_change(offset: int, broker: int, epoch: int, **fields: int) -> tuple[Any, ...]:
    return rec(offset, A.BROKER_REGISTRATION_CHANGE, {"brokerId": broker, "brokerEpoch": epoch, **fields})


def _feature(offset: int, level: int) -> tuple[Any, ...]:
    return rec(offset, A.FEATURE_LEVEL, {"name": A.ELR_FEATURE, "featureLevel": level})


def test_broker_events_and_the_clean_unclean_registration_rule(spark: Any) -> None:
    rows = [
        _feature(0, 1),
        rec(1, A.TOPIC, {"name": "t", "topicId": "TTT"}),
        *[_register(1 + b, b, f"I{b}a") for b in (1, 2, 3, 4, 5)],  # offsets 2..6
        _broker_change(7, 1, 2, fenced=-1),
        _partition(8, "TTT", 0, [1, 2, 3], 1, isr=[1], eligibleLeaderReplicas=[2, 3]),
        _partition(9, "TTT", 1, [4, 5, 1], 4),
        _broker_change(10, 2, 3, inControlledShutdown=1),
        _broker_change(11, 2, 3, fenced=1),
        # 3 restarts: its registration batch takes it out of t-0's ELR first (unclean path).
        _change(12, "TTT", 0, eligibleLeaderReplicas=[2]),
        _register(13, 3, "I3b", base=12),
        # 2 restarts: it stays in t-0's ELR (the unclean path would have removed it).
        _register(14, 2, "I2b"),
        # 4 restarts: out of t-1's ISR but not into its ELR (unclean path).
        _change(15, "TTT", 1, isr=[5, 1], leader=5),
        _register(16, 4, "I4b", base=15),
        # 5 restarts: moved from t-1's ISR into its ELR (the clean path's fence-style removal).
        _change(17, "TTT", 1, isr=[1], leader=1, eligibleLeaderReplicas=[5]),
        _register(18, 5, "I5b", base=17),
        _register(19, 1, "I1a"),  # the same incarnation again
        _register(20, 6, "I6a"),
        _register(21, 6, "I6b"),  # in no ISR or ELR: both paths write nothing
        _feature(22, 0),
        _register(23, 6, "I6c"),  # ELR disabled: handled as clean
        rec(24, A.UNREGISTER_BROKER, {"brokerId": 1, "brokerEpoch": 2}),
    ]
    history = frame(spark, rows)
    changes = A.partition_changes(history)
    timeline = sorted(A.brokers_timeline(history, changes).collect(), key=lambda r: (r["offset"], r["event"]))
    regs = {
        (r["broker"], r["incarnation_id"]): r
        for r in timeline
        if r["event"] == A.REGISTERED and r["broker"] != 1
    }
    assert {k: r["registration"] for k, r in regs.items()} == {
        (2, "I2a"): A.FIRST,
        (3, "I3a"): A.FIRST,
        (4, "I4a"): A.FIRST,
        (5, "I5a"): A.FIRST,
        (3, "I3b"): A.UNCLEAN,
        (2, "I2b"): A.CLEAN,
        (4, "I4b"): A.UNCLEAN,
        (5, "I5b"): A.CLEAN,
        (6, "I6a"): A.FIRST,
        (6, "I6b"): A.INDETERMINATE,
        (6, "I6c"): A.CLEAN,
    }
    assert [r["registration"] for r in timeline if r["broker"] == 1 and r["event"] == A.REGISTERED] == [
        A.FIRST,
        A.SAME_INCARNATION,
    ]
    assert "taken out of the ELR of t-0" in regs[(3, "I3b")]["evidence"]
    assert "kept in the ELR of t-0" in regs[(2, "I2b")]["evidence"]
    assert "taken out of the ISR (not into the ELR) of t-1" in regs[(4, "I4b")]["evidence"]
    assert "moved from the ISR into the ELR of t-1" in regs[(5, "I5b")]["evidence"]
    assert "ELR disabled" in regs[(6, "I6c")]["evidence"]
    assert regs[(3, "I3b")]["previous_incarnation_id"] == "I3a"

    broker2 = [(r["event"], r["state"]) for r in timeline if r["broker"] == 2]
    assert broker2 == [
        (A.REGISTERED, A.FENCED),
        (A.CONTROLLED_SHUTDOWN, A.CONTROLLED_SHUTDOWN),
        (A.FENCED, A.FENCED),
        (A.REGISTERED, A.FENCED),
    ]
    broker1 = [(r["event"], r["state"]) for r in timeline if r["broker"] == 1]
    assert broker1 == [
        (A.REGISTERED, A.FENCED),
        (A.UNFENCED, A.ACTIVE),
        (A.REGISTERED, A.FENCED),
        (A.UNREGISTERED, A.UNREGISTERED),
    ]
    assert regs[(3, "I3b")]["broker_epoch"] == 13 and regs[(3, "I3b")]["batch_base_offset"] == 12


# ------------------------------------------------------------------------------------------------
# End to end on a real cluster

BROKER_TIMEOUTS = {"broker.heartbeat.interval.ms": "500", "broker.session.timeout.ms": "3000"}
FAST_TIMEOUTS = {
    "controller.quorum.election.timeout.ms": "500",
    "controller.quorum.fetch.timeout.ms": "1000",
    "controller.quorum.election.backoff.max.ms": "300",
    "controller.quorum.request.timeout.ms": "800",
    "controller.quorum.retry.backoff.ms": "20",
    "controller.quorum.append.linger.ms": "5",
}
# min.insync.replicas = RF: every broker that leaves an ISR of 3 enters its ELR, so both the
# killed broker and the cleanly stopped one are eligible when they come back.
OVERRIDES = {**FAST_TIMEOUTS, **BROKER_TIMEOUTS, "min.insync.replicas": "3"}
KILLED_BROKER = 6


def _table(out: Path, name: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(out / "tables" / name).to_pylist()
    return rows


class History:
    def __init__(
        self, out: Path, live: Path, killed_controller: int, stopped_broker: int, printed: str
    ) -> None:
        self.out, self.live = out, live  # --log-dir after `down`; --bootstrap-controller while up
        self.killed_controller, self.stopped_broker = killed_controller, stopped_broker
        self.printed = printed

    def table(self, name: str) -> list[dict[str, Any]]:
        return _table(self.out, name)


def _wait_for(what: str, probe: Any, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = probe()
        except OSError:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def history(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> History:
    from kraft.cli import analyze, topics
    from kraft.cli import cluster as cluster_cli
    from kraft.client.admin import AdminClient
    from kraft.client.broker_admin import BrokerAdminClient, TopicDescription
    from kraft.client.connection import AdminError

    root = tmp_path_factory.mktemp("history")
    log = io.StringIO()

    def cluster(*args: str) -> None:
        assert cluster_cli.main([*args, "--data-dir", str(root)], out=log, err=log) == 0, log.getvalue()

    overrides = [a for k, v in OVERRIDES.items() for a in ("--override", f"{k}={v}")]
    cluster("up", "--controllers", "3", "--brokers", "3", "--base-port", "0", "--detach",
            "--create-topic", "t:3:3", *overrides)  # fmt: skip
    try:
        spec = cluster_cli.ClusterFile.load(root / cluster_cli.CLUSTER_FILE)
        survivor = spec.node(4).broker_address

        def unfenced() -> set[int]:
            return cluster_cli.unfenced_brokers(survivor, 1.0)

        cluster("stop-node", "--id", str(KILLED_BROKER), "--kill")
        _wait_for("the killed broker fenced", lambda: KILLED_BROKER not in unfenced())
        # Stop cleanly a broker that leads a partition (one that leads none is fenced at once,
        # without a controlled shutdown); the other one stays up.
        with BrokerAdminClient([survivor]) as admin:
            described = admin.describe_topics(["t"])["t"]
        assert isinstance(described, TopicDescription)
        leaders = {p.leader for p in described.partitions}
        stopped = 5 if 5 in leaders else 4
        survivor = spec.node(9 - stopped).broker_address
        cluster("stop-node", "--id", str(stopped), "--clean")  # controlled shutdown
        killed = AdminClient(spec.bootstrap()).describe_quorum().leader_id
        cluster("stop-node", "--id", str(killed), "--kill")
        others = [n.address for n in spec.controllers if n.id != killed]

        def new_leader() -> int | None:
            try:
                leader = AdminClient(others, timeout_ms=1000).describe_quorum().leader_id
            except AdminError:
                return None
            return leader if leader not in (-1, killed) else None

        _wait_for("a new active controller", new_leader)
        create = ["--bootstrap-server", str(survivor), "--create", "--topic", "after"]
        assert topics.main([*create, "--partitions", "1", "--replication-factor", "1"], log, err=log) == 0
        for broker in (KILLED_BROKER, stopped):  # unclean restart, then clean restart
            cluster("start-node", "--id", str(broker))
            _wait_for(f"broker {broker} unfenced", lambda b=broker: b in unfenced())
        live = root / "live-analysis"
        bootstrap = ",".join(str(n.address) for n in spec.controllers if n.id != killed)
        err = io.StringIO()
        argv = ["--bootstrap-controller", bootstrap, "--out", str(live)]
        assert analyze.main(argv, out=io.StringIO(), err=err) == 0, err.getvalue()
    finally:
        cluster_cli.main(["down", "--data-dir", str(root)], out=log, err=log)
    out = root / "analysis"
    printed, err = io.StringIO(), io.StringIO()
    status = analyze.main(["--log-dir", str(root), "--out", str(out)], out=printed, err=err)
    assert status == 0, err.getvalue() + log.getvalue()
    return History(out, live, killed, stopped, printed.getvalue())


def test_the_failover_shows_as_a_new_epoch_with_another_leader(history: History) -> None:
    changes = sorted(history.table("leader_changes"), key=lambda r: r["offset"])
    assert changes[0]["leader"] == history.killed_controller
    failover = [
        r for r in changes if r["previous_leader"] == history.killed_controller and r["leader_changed"]
    ]
    assert failover, changes
    new = failover[0]
    assert new["leader"] != history.killed_controller and new["epoch"] > changes[0]["epoch"]
    assert history.killed_controller not in new["granting_voters"] and new["voters"] == [1, 2, 3]
    # The topic created after the failover is in the history, after the new leader's first record.
    after = [r for r in history.table("partition_changes") if r["topic"] == "after"]
    assert after and min(r["offset"] for r in after) > new["offset"]
    # The killed controller's log stopped: the timeline shows it falling behind.
    timeline = history.table("quorum_timeline")
    assert dict(timeline[-1]["lag"])[history.killed_controller] > 0
    records = history.table("records")
    in_history = [r for r in records if r["in_history"] and not r["from_snapshot"]]
    assert sum(r["records"] for r in timeline) == len(in_history)
    assert {r["node"] for r in records} == {1, 2, 3, 4, 5, 6}
    assert all(r["committed"] for r in in_history)


def test_the_report_tells_of_the_failover(history: History) -> None:
    page = (history.out / "report.html").read_text()
    changes = history.table("leader_changes")
    new = next(r for r in changes if r["previous_leader"] == history.killed_controller)
    assert (
        f"failover: leader {history.killed_controller} -&gt; {new['leader']} in epoch {new['epoch']}" in page
    )
    assert page.count("data:image/png;base64,") == 4
    for name in ("leadership.png", "commit_rate.png", "brokers.png", "isr_elr.png"):
        assert (history.out / name).read_bytes()[:8] == PNG
    assert "committed end offset" in history.printed and "report.html" in history.printed
    summary = json.loads((history.out / "analysis.json").read_text())
    assert summary["verified"] and summary["voters"] == [1, 2, 3]
    assert set(summary["rows"]) == set(A.TABLES)


def test_brokers_timeline_shows_fencing_controlled_shutdown_and_both_restarts(history: History) -> None:
    events = sorted(history.table("brokers_timeline"), key=lambda r: r["offset"])

    def of(broker: int) -> list[dict[str, Any]]:
        return [r for r in events if r["broker"] == broker]

    stopped_broker = history.stopped_broker
    killed = [r["event"] for r in of(KILLED_BROKER)]
    stopped = [r["event"] for r in of(stopped_broker)]
    # Killed: fenced when its session expired, never in controlled shutdown before that.
    first_fence = killed.index(A.FENCED)
    assert killed[:first_fence] == [A.REGISTERED, A.UNFENCED]
    # Stopped cleanly while leading a partition: controlled shutdown, then fenced.
    assert stopped[:4] == [A.REGISTERED, A.UNFENCED, A.CONTROLLED_SHUTDOWN, A.FENCED]
    regs = {b: [r for r in of(b) if r["event"] == A.REGISTERED] for b in (KILLED_BROKER, stopped_broker)}
    assert [r["registration"] for r in regs[KILLED_BROKER]] == [A.FIRST, A.UNCLEAN]
    assert [r["registration"] for r in regs[stopped_broker]] == [A.FIRST, A.CLEAN]
    assert "taken out of the ELR" in regs[KILLED_BROKER][1]["evidence"]
    assert "kept in the ELR" in regs[stopped_broker][1]["evidence"]
    assert {of(b)[-1]["state"] for b in (4, 5, 6)} == {A.FENCED}  # all left through `down`
    page = (history.out / "report.html").read_text()
    assert f"broker {KILLED_BROKER} re-registered (unclean)" in page
    assert f"broker {stopped_broker} re-registered (clean)" in page


def test_partition_changes_show_isr_shrinking_and_elr_filling_and_emptying(history: History) -> None:
    changes = sorted(
        (r for r in history.table("partition_changes") if r["topic"] == "t"), key=lambda r: r["offset"]
    )
    assert {r["partition"] for r in changes} == {0, 1, 2}
    for p in (0, 1, 2):
        rows = [r for r in changes if r["partition"] == p]
        assert rows[0]["cause"] == A.PARTITION and sorted(rows[0]["isr"]) == [4, 5, 6]
        entered = [b for r in rows for b in r["elr_added"]]
        assert KILLED_BROKER in entered and history.stopped_broker in entered  # left below min ISR
        assert any(KILLED_BROKER in r["isr_removed"] for r in rows)
        # The unclean re-registration took the killed broker out of the ELR.
        assert any(KILLED_BROKER in r["elr_removed"] for r in rows)
        epochs = [r["partition_epoch"] for r in rows]
        assert epochs == list(range(len(rows)))  # every change bumps the partition epoch by one


def test_the_live_quorum_read_through_the_stream_tells_the_same_history(history: History) -> None:
    """``--bootstrap-controller`` (run before ``down``) sees a prefix of what ``--log-dir`` sees
    afterwards: the same committed records and so the same tables, up to its high watermark."""
    live = json.loads((history.live / "analysis.json").read_text())
    assert live["committed_by"].startswith("below the quorum's high watermark")
    assert live["reference_node"] is None
    end = live["committed_end"]
    assert end > 0

    def history_rows(out: Path) -> list[tuple[Any, ...]]:
        rows = [r for r in _table(out, "records") if r["in_history"] and r["offset"] < end]
        assert all(r["committed"] for r in rows)
        return sorted((r["offset"], r["leader_epoch"], r["from_snapshot"], r["payload"]) for r in rows)

    assert history_rows(history.live) == history_rows(history.out)
    for name, key in (
        ("leader_changes", ("offset", "epoch", "leader", "granting_voters")),
        (
            "partition_changes",
            ("offset", "topic", "partition", "isr", "elr", "leader_epoch", "partition_epoch"),
        ),
        ("brokers_timeline", ("offset", "broker", "event", "state", "registration")),
    ):

        def rows(out: Path, name: str = name, key: tuple[str, ...] = key) -> list[tuple[Any, ...]]:
            return sorted(tuple(r[k] for k in key) for r in _table(out, name) if r["offset"] < end)

        assert rows(history.live) == rows(history.out), name
    assert (history.live / "report.html").exists() and not (history.live / "tables" / "_stream").exists()
