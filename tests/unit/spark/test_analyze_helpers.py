"""The plain-Python parts of ``kraft analyze`` without a SparkSession: the per-partition replay
(PartitionChangeRecord merge, ClearElr, topic removal), the per-broker replay and the clean/unclean
registration rule, choosing the reference log, finding the logs of a directory, and the report's
page and plots from small pandas frames."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")  # kraft.spark.analyze imports pyspark (no session is started)

from kraft.spark import analyze as A

T0 = datetime(2026, 1, 1)


def event(offset: int, cause: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {name: None for name, _ in A.PARTITION_EVENT_COLUMNS}
    row.update(topic_id="T", partition=0, offset=offset, batch_base_offset=offset, cause=cause)
    row.update(timestamp=T0 + timedelta(milliseconds=offset), from_snapshot=False)
    row.update(fields)
    return row


def created(offset: int, replicas: list[int], leader: int, **fields: Any) -> dict[str, Any]:
    base = dict(replicas=replicas, isr=replicas, removing_replicas=[], adding_replicas=[], leader=leader)
    base.update(leader_recovery_state=0, leader_epoch=0, partition_epoch=0)
    base.update(fields)
    return event(offset, A.PARTITION, **base)


def change(offset: int, **fields: Any) -> dict[str, Any]:
    base = dict(leader=-2, leader_recovery_state=-1)
    base.update(fields)
    return event(offset, A.PARTITION_CHANGE, **base)


def states(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            r["offset"],
            r["leader"],
            r["leader_epoch"],
            r["partition_epoch"],
            r["isr"],
            r["elr"],
            r["last_known_elr"],
        )
        for r in rows
    ]


def test_replay_merges_changes_with_absent_and_minus_two_fields_unchanged() -> None:
    rows = A.replay_partition(
        [
            change(4, isr=[2], leader=2),  # out of order on purpose: replay sorts by offset
            created(1, [1, 2, 3], 1),
            change(2, isr=[1, 2]),
            change(3, isr=[1], leader=1),  # the same leader again: the leader epoch still bumps
            change(5, leader_recovery_state=1, leader=3),
            change(6, isr=[3, 1]),  # LeaderRecoveryState -1: stays RECOVERING
        ]
    )
    assert states(rows) == [
        (1, 1, 0, 0, [1, 2, 3], [], []),
        (2, 1, 0, 1, [1, 2], [], []),
        (3, 1, 1, 2, [1], [], []),
        (4, 2, 2, 3, [2], [], []),
        (5, 3, 3, 4, [2], [], []),
        (6, 3, 3, 5, [3, 1], [], []),
    ]
    assert [r["leader_recovery_state"] for r in rows] == [0, 0, 0, 0, 1, 1]
    assert [r["leader_changed"] for r in rows] == [False, False, False, True, True, False]
    assert (rows[1]["isr_removed"], rows[5]["isr_added"], rows[5]["isr_removed"]) == ([3], [3, 1], [2])
    assert all(r["replicas"] == [1, 2, 3] for r in rows)


def test_replay_tracks_elr_and_last_known_elr_clear_elr_and_topic_removal() -> None:
    rows = A.replay_partition(
        [
            created(1, [1, 2, 3], 1),
            change(2, isr=[1], elr=[2, 3]),
            change(3, isr=[], leader=-1, elr=[3, 2, 1], last_known_elr=[1]),
            event(4, A.CLEAR_ELR),
            event(5, A.CLEAR_ELR),  # nothing left to clear: no row
            event(6, A.REMOVE_TOPIC),
            created(7, [4], 4),  # a PartitionRecord starts over
        ]
    )
    assert states(rows) == [
        (1, 1, 0, 0, [1, 2, 3], [], []),
        (2, 1, 0, 1, [1], [2, 3], []),
        (3, -1, 1, 2, [], [3, 2, 1], [1]),
        (4, -1, 1, 3, [], [], []),
        (6, None, None, None, None, None, None),
        (7, 4, 0, 0, [4], [], []),
    ]
    assert (rows[1]["elr_added"], rows[2]["elr_added"], rows[3]["elr_removed"]) == ([2, 3], [1], [3, 2, 1])
    assert (rows[4]["cause"], rows[4]["isr_removed"], rows[4]["leader_changed"]) == (
        A.REMOVE_TOPIC,
        [],
        False,
    )
    assert rows[5]["previous_leader"] is None


def test_a_change_without_a_base_is_kept_with_null_epochs() -> None:
    rows = A.replay_partition(
        [change(9, isr=[5], elr=[6]), event(10, A.CLEAR_ELR), event(11, A.REMOVE_TOPIC)]
    )
    assert len(rows) == 1
    assert (rows[0]["isr"], rows[0]["elr"], rows[0]["leader"], rows[0]["partition_epoch"]) == (
        [5],
        [6],
        None,
        None,
    )


def reg(offset: int, incarnation: str, *, base: int | None = None, snapshot: bool = False) -> dict[str, Any]:
    return {
        "broker": 7,
        "offset": offset,
        "batch_base_offset": offset if base is None else base,
        "timestamp": T0,
        "event": A.REGISTERED,
        "state": A.FENCED,
        "broker_epoch": offset,
        "incarnation_id": incarnation,
        "rack": None,
        "record_type": A.REGISTER_BROKER,
        "from_snapshot": snapshot,
    }


def lifecycle(offset: int, event_name: str, state: str | None) -> dict[str, Any]:
    row = reg(offset, "")
    row.update(event=event_name, state=state, incarnation_id=None, record_type=A.BROKER_REGISTRATION_CHANGE)
    return row


def fact(offset: int, partition: int = 0, *, base: int | None = None, **flags: bool) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(name for name, _ in A.BROKER_FACT_COLUMNS)
    row.update(broker=7, kind=A.PARTITION_FACT, offset=offset, from_snapshot=False)
    row.update(batch_base_offset=offset if base is None else base, topic_id="T", partition=partition)
    row.update(label=f"t-{partition}", in_elr=False, left_elr=False, left_isr=False, isr_to_elr=False)
    row.update(flags)
    return row


def level(offset: int, value: int) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(name for name, _ in A.BROKER_FACT_COLUMNS)
    row.update(broker=7, kind=A.LEVEL_FACT, offset=offset, batch_base_offset=offset, level=value)
    return row


@pytest.mark.parametrize(
    ("facts", "verdict", "evidence"),
    [
        ([fact(3, in_elr=True), fact(10, base=10, left_elr=True)], A.UNCLEAN, "taken out of the ELR of t-0"),
        ([fact(10, base=10, left_isr=True)], A.UNCLEAN, "taken out of the ISR (not into the ELR) of t-0"),
        (
            [fact(10, base=10, isr_to_elr=True, in_elr=True)],
            A.CLEAN,
            "moved from the ISR into the ELR of t-0",
        ),
        ([fact(3, in_elr=True)], A.CLEAN, "kept in the ELR of t-0"),
        ([fact(3, in_elr=True), fact(5, in_elr=False)], A.INDETERMINATE, "in no ISR or ELR"),  # left before
        ([], A.INDETERMINATE, "both paths write nothing"),
        ([fact(10, base=9, left_elr=True)], A.INDETERMINATE, "in no ISR"),  # another batch: not evidence
        (
            [fact(3, 0, in_elr=True), fact(10, 1, base=10, left_elr=True)],
            A.CONFLICTING,
            "kept in the ELR of t-0",
        ),
        ([fact(12, base=10, left_elr=True)], A.INDETERMINATE, "in no ISR"),  # after the registration
    ],
)
def test_a_new_incarnation_is_classified_from_its_registration_batch(
    facts: list[dict[str, Any]], verdict: str, evidence: str
) -> None:
    known = sorted([level(0, 1), *facts], key=lambda f: f["offset"])
    got, why = A.classify_registration(reg(11, "b", base=10), "a", known)
    assert got == verdict and why is not None and evidence in why


def test_elr_disabled_makes_every_re_registration_clean_and_ignores_isr_removal() -> None:
    facts = [level(0, 1), level(5, 0), fact(10, base=10, left_isr=True)]
    got, why = A.classify_registration(reg(11, "b", base=10), "a", facts)
    assert got == A.CLEAN and why is not None and "ELR disabled" in why
    assert (
        A.classify_registration(reg(11, "b", base=10), "a", [fact(10, base=10, left_isr=True)])[0] == A.CLEAN
    )


def test_replay_broker_fills_states_incarnations_and_registration_classes() -> None:
    events = [
        lifecycle(4, A.FENCED, A.FENCED),
        reg(1, "a"),
        lifecycle(2, A.UNFENCED, A.ACTIVE),
        lifecycle(4, A.CONTROLLED_SHUTDOWN, A.CONTROLLED_SHUTDOWN),  # same record: before fenced
        lifecycle(5, A.CHANGED, None),
        reg(8, "a"),
        reg(11, "b", base=10),
        lifecycle(12, A.UNREGISTERED, A.UNREGISTERED),
    ]
    rows = A.replay_broker(events, [fact(3, in_elr=True), level(0, 1)])
    assert [(r["offset"], r["event"], r["state"], r["registration"]) for r in rows] == [
        (1, A.REGISTERED, A.FENCED, A.FIRST),
        (2, A.UNFENCED, A.ACTIVE, None),
        (4, A.CONTROLLED_SHUTDOWN, A.CONTROLLED_SHUTDOWN, None),
        (4, A.FENCED, A.FENCED, None),
        (5, A.CHANGED, A.FENCED, None),
        (8, A.REGISTERED, A.FENCED, A.SAME_INCARNATION),
        (11, A.REGISTERED, A.FENCED, A.CLEAN),
        (12, A.UNREGISTERED, A.UNREGISTERED, None),
    ]
    assert [r["previous_incarnation_id"] for r in rows if r["event"] == A.REGISTERED] == [None, "a", "a"]
    assert A.classify_registration(reg(2, "x", snapshot=True), None, []) == (A.FROM_SNAPSHOT, None)


def node_log(
    node: int | None, committed: int | None, *, voter: bool | None = True, end: int = 10
) -> A.NodeLog:
    return A.NodeLog(node, voter, end, 0, end, None, committed, committed)


def test_the_reference_is_the_longest_committed_log_then_a_voter_then_the_lowest_id() -> None:
    logs = [node_log(3, 8), node_log(2, 8), node_log(5, 9, voter=False, end=9), node_log(1, 5, end=12)]
    assert A.pick_reference(logs).node == 5
    assert A.pick_reference([node_log(4, 8, voter=False), node_log(3, 8)]).node == 3
    assert A.pick_reference([node_log(3, 8), node_log(2, 8)]).node == 2
    assert A.pick_reference([node_log(None, None, voter=None)]).node is None
    with pytest.raises(ValueError):
        A.pick_reference([])


def make_log_dir(path: Path) -> Path:
    (path / "__cluster_metadata-0").mkdir(parents=True)
    return path


def test_locate_logs_reads_a_cluster_dir_a_node_dir_or_its_partition_dir(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster"
    for n in (1, 2, 4):
        make_log_dir(cluster / f"node-{n}" / "metadata")
    nodes = [
        {"id": n, "roles": ["controller"] if n <= 3 else ["broker"], "log_dir": f"/moved/node-{n}/metadata"}
        for n in (1, 2, 3, 4)
    ]
    (cluster / "cluster.json").write_text(json.dumps({"cluster_id": "x", "nodes": nodes}))
    found = A.locate_logs(cluster)
    assert found.cluster and found.voters == (1, 2, 3)
    assert found.paths == {n: cluster / f"node-{n}" / "metadata" for n in (1, 2, 4)}
    assert found.skipped == ("node 3: no metadata log in /moved/node-3/metadata",)

    (cluster / "cluster.json").unlink()
    bare = A.locate_logs(cluster)
    assert bare.cluster and bare.voters is None and set(bare.paths) == {1, 2, 4}

    single = A.locate_logs(cluster / "node-1" / "metadata")
    assert not single.cluster and single.paths == {None: cluster / "node-1" / "metadata"}
    partition = cluster / "node-1" / "metadata" / "__cluster_metadata-0"
    assert A.locate_logs(partition).paths == {None: partition}
    with pytest.raises(FileNotFoundError):
        A.locate_logs(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError):
        A.locate_logs(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "cluster.json").write_text("{not json")
    with pytest.raises(ValueError):
        A.locate_logs(tmp_path / "bad")


# ------------------------------------------------------------------------------------------------
# The report from small frames


def report_data() -> Any:
    pd = pytest.importorskip("pandas")
    from kraft.spark.report import ReportData

    t = [T0 + timedelta(seconds=s) for s in range(6)]
    leader_changes = pd.DataFrame(
        {
            "offset": [0, 30],
            "epoch": [1, 2],
            "leader": [1, 2],
            "voters": [[1, 2, 3], [1, 2, 3]],
            "granting_voters": [[1, 2], [2, 3]],
            "timestamp": [t[0], t[3]],
            "previous_epoch": [None, 1],
            "previous_leader": [None, 1.0],
            "leader_changed": [True, True],
            "previous_record_timestamp": [None, t[2]],
            "gap_ms": [None, 1000.0],
        }
    )
    timeline = pd.DataFrame(
        {
            "bucket_start": t[:5],
            "bucket_end": t[1:6],
            "records": [6, 10, 2, 4, 3],
            "last_offset": [5, 15, 17, 21, 24],
            "epoch": [1, 1, 1, 2, 2],
            "leader": [1, 1, 1, 2, 2],
            "leader_changes": [1, 0, 0, 1, 0],
            "log_end": [{1: 6, 2: 6}, {1: 16, 2: 16}, {1: 18, 2: 18}, {1: 18, 2: 22}, {1: 18, 2: 25}],
            "lag": [{1: 0, 2: 0}, {1: 0, 2: 0}, {1: 0, 2: 0}, {1: 4, 2: 0}, {1: 7, 2: 0}],
            "max_lag": [0, 0, 0, 4, 7],
        }
    )
    brokers = pd.DataFrame(
        [
            (4, 6, t[0], A.REGISTERED, A.FENCED, A.FIRST, None),
            (4, 7, t[1], A.UNFENCED, A.ACTIVE, None, None),
            (4, 20, t[2], A.CONTROLLED_SHUTDOWN, A.CONTROLLED_SHUTDOWN, None, None),
            (4, 21, t[2], A.FENCED, A.FENCED, None, None),
            (4, 40, t[4], A.REGISTERED, A.FENCED, A.UNCLEAN, "taken out of the ELR of t-0"),
        ],
        columns=["broker", "offset", "timestamp", "event", "state", "registration", "evidence"],
    ).assign(broker_epoch=lambda f: f["offset"], incarnation_id="x")
    series = pd.DataFrame(
        {
            "topic": ["t"] * 3,
            "topic_id": ["T"] * 3,
            "partition": [0] * 3,
            "offset": [8, 21, 40],
            "timestamp": [t[0], t[2], t[4]],
            "leader": [4, -1, -1],
            "isr": [[4, 5, 6], [], []],
            "elr": [[], [4], []],
        }
    )
    notable = pd.DataFrame(
        {
            "topic": ["t"],
            "topic_id": ["T"],
            "partition": [0],
            "offset": [21],
            "timestamp": [t[2]],
            "cause": [A.PARTITION_CHANGE],
            "leader": [-1],
            "previous_leader": [4],
            "leader_changed": [True],
            "leader_recovery_state": [0],
            "partition_epoch": [3],
            "isr": [[]],
            "elr": [[4]],
            "last_known_elr": [[4]],
            "elr_added": [[4]],
            "elr_removed": [[]],
        }
    )
    partitions = pd.DataFrame(
        [("t", "T", 0, 3, 1, 1, 0, 1, 0, 0, 1, 0, -1, 1, 3, [], [], [4])],
        columns=[
            "topic", "topic_id", "partition", "changes", "leader_changes", "became_leaderless",
            "unclean_elections", "elr_entries", "elr_cleared", "min_isr", "max_elr", "removed",
            "leader", "leader_epoch", "partition_epoch", "isr", "elr", "last_known_elr",
        ],
    )  # fmt: skip
    counts = pd.DataFrame({"type": ["NO_OP_RECORD"], "from_snapshot": [False], "count": [40]})
    return ReportData(leader_changes, timeline, brokers, partitions, series, notable, counts, t[0], t[5])


def test_notable_events_tell_the_failover_fencing_registrations_and_leaderless_partitions() -> None:
    from kraft.spark.report import notable_events

    texts = [text for _, _, text in notable_events(report_data())]
    assert texts == [
        "leader 1 elected in epoch 1 (votes from 1, 2)",
        "broker 4 registered (first), epoch 6",
        "broker 4 unfenced",
        "broker 4 entered controlled shutdown",
        "broker 4 fenced",
        "t-0: leaderless (was 4); 4 entered the ELR (ISR [], ELR [4], LastKnownElr [4], leader -1)",
        "failover: leader 1 -> 2 in epoch 2 (votes from 2, 3; 1000 ms after the previous record)",
        "broker 4 re-registered (unclean), epoch 40: taken out of the ELR of t-0",
    ]


def test_the_page_embeds_the_four_plots_and_summarises_each_table(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from kraft.spark.report import PLOTS, render_html, write_plots

    data = report_data()
    plots = write_plots(data, tmp_path, 1000)
    assert sorted(p.name for p in plots) == sorted(PLOTS)
    for p in plots:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    analysis = A.Analysis(
        out_dir=tmp_path,
        source="/data/<cluster>",
        cluster=True,
        verified=True,
        voters=[1, 2, 3],
        reference=2,
        committed_by="judged by a majority of the voters [1, 2, 3]",
        committed_end=41,
        bucket_ms=1000,
        logs=[node_log(1, 30, end=30), node_log(2, 41, end=41)],
        tables={name: tmp_path / "tables" / name for name in A.TABLES},
        counts={name: 1 for name in A.TABLES},
    )
    page = render_html(data, analysis, plots)
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") == 4
    assert "/data/&lt;cluster&gt;" in page and "<cluster>" not in page  # escaped
    for heading in (
        "Logs",
        "Notable events",
        "Leader changes (2)",
        "Quorum timeline",
        "Brokers",
        "Partitions",
    ):
        assert heading in page
    assert "failover: leader 1 -&gt; 2 in epoch 2" in page
    assert "node 1 max lag" in page and "7 records" in page
    assert "judged by a majority of the voters [1, 2, 3]" in page


def test_broker_spans_last_until_the_next_event_or_the_end() -> None:
    from kraft.spark.report import broker_spans

    data = report_data()
    spans = broker_spans(data.brokers, T0 + timedelta(seconds=9))
    assert [(s.second, e.second, state) for s, e, state in spans[4]] == [
        (0, 1, A.FENCED),
        (1, 2, A.ACTIVE),
        (2, 2, A.CONTROLLED_SHUTDOWN),
        (2, 4, A.FENCED),
        (4, 9, A.FENCED),
    ]
