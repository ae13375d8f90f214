"""``kraft metadata-shell``: Kafka's paths and node strings over images loaded from real snapshot
files and log directories (written by the storage writers), one-shot, scripted and JSON use, and
clear failures for bad paths, bad files and records that do not replay."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pytest

from kraft.cli import main as kraft_main
from kraft.cli import metadata_shell
from kraft.metadata import metadata_tree as mt
from kraft.metadata.bootstrap import bootstrap_metadata
from kraft.metadata.image import MetadataLoader
from kraft.metadata.image_snapshot import snapshot_records_bytes
from kraft.metadata.records import (
    REGISTER_BROKER_RECORD,
    REGISTER_CONTROLLER_RECORD,
    ApiMessageAndVersion,
    MetadataRecordType,
    encode_record,
    make_record,
)
from kraft.raft.listener import SnapshotWriter
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, assign_offsets_and_epoch, build_batch
from kraft.records.control import ControlType, build_control_batch, leader_change_message
from kraft.storage.bootstrap_file import write_bootstrap_checkpoint
from kraft.storage.metadata_log import MetadataLog
from kraft.storage.snapshots import FileRawSnapshotWriter

T = MetadataRecordType
ORDERS = uuid.UUID(int=0x0123456789ABCDEF0011223344556677)
AUDIT = uuid.UUID(int=0xFEDCBA98765432100011223344556677)
DIR_1 = uuid.UUID(int=(0x8000000000000001 << 64) | 5)  # negative as Kafka's signed halves: sorts first
DIR_2 = uuid.UUID(int=(0x0000000000000001 << 64) | 5)
DIR_B2 = uuid.UUID(int=0x22)
INCARNATION_1 = uuid.UUID(int=0x11)
INCARNATION_2 = uuid.UUID(int=0x12)
TS = 1_729_827_181_123  # 2024-10-25T03:33:01.123Z
EPOCH = 3


def b64(u: uuid.UUID) -> str:
    return mt.uuid_to_base64(u)


# -----------------------------------------------------------------------------------------------
# Records and files


def broker(broker_id: int, **fields: object) -> ApiMessageAndVersion:
    cls = REGISTER_BROKER_RECORD.cls
    base: dict[str, object] = {
        "broker_id": broker_id,
        "incarnation_id": INCARNATION_1,
        "broker_epoch": 10 + broker_id,
        "end_points": [],
        "features": [],
        "rack": None,
        "fenced": True,
    }
    base.update(fields)
    base["end_points"] = [
        cls.BrokerEndpoint(name=n, host=h, port=p, security_protocol=sp)  # type: ignore[attr-defined]
        for n, h, p, sp in base["end_points"]  # type: ignore[attr-defined]
    ]
    base["features"] = [
        cls.BrokerFeature(name=n, min_supported_version=lo, max_supported_version=hi)  # type: ignore[attr-defined]
        for n, lo, hi in base["features"]  # type: ignore[attr-defined]
    ]
    return make_record(T.REGISTER_BROKER, 3, **base)


def controller(controller_id: int) -> ApiMessageAndVersion:
    cls = REGISTER_CONTROLLER_RECORD.cls
    return make_record(
        T.REGISTER_CONTROLLER,
        controller_id=controller_id,
        incarnation_id=INCARNATION_2,
        zk_migration_ready=False,
        end_points=[
            cls.ControllerEndpoint(name="CONTROLLER", host="c1", port=9093, security_protocol=0)  # type: ignore[attr-defined]
        ],
        features=[
            cls.ControllerFeature(  # type: ignore[attr-defined]
                name="metadata.version", min_supported_version=1, max_supported_version=25
            )
        ],
    )


def partition(
    topic_id: uuid.UUID, pid: int, replicas: list[int], version: int = 2, **kw: object
) -> ApiMessageAndVersion:
    fields: dict[str, object] = {
        "partition_id": pid,
        "topic_id": topic_id,
        "replicas": replicas,
        "isr": replicas,
        "removing_replicas": [],
        "adding_replicas": [],
        "leader": replicas[0],
        "leader_epoch": 0,
        "partition_epoch": 0,
    }
    if version >= 1:
        fields["directories"] = [DIR_2 if r == 1 else DIR_B2 for r in replicas]
    fields.update(kw)
    return make_record(T.PARTITION, version, **fields)


def config(resource_type: int, resource: str, key: str, value: str) -> ApiMessageAndVersion:
    return make_record(T.CONFIG, resource_type=resource_type, resource_name=resource, name=key, value=value)


FEATURES = [
    make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=25),
    make_record(T.FEATURE_LEVEL, name="eligible.leader.replicas.version", feature_level=1),
    make_record(T.FEATURE_LEVEL, name="group.version", feature_level=1),
    make_record(T.ZK_MIGRATION_STATE, zk_migration_state=0),
]
CLUSTER = [
    broker(
        1,
        incarnation_id=INCARNATION_1,
        end_points=[("PLAINTEXT", "b1", 9092, 0), ("EXTERNAL", "b1.example", 9094, 1)],
        features=[("metadata.version", 1, 25), ("eligible.leader.replicas.version", 0, 1)],
        rack="r1",
        fenced=False,
        log_dirs=[DIR_2, DIR_1],
    ),
    broker(
        2,
        incarnation_id=INCARNATION_2,
        end_points=[("PLAINTEXT", "b2", 9092, 0)],
        features=[("metadata.version", 7, 7), ("group.version", 1, 0x7FFF)],
        log_dirs=[DIR_B2],
    ),
    controller(3000),
]
TOPICS = [
    make_record(T.TOPIC, name="orders", topic_id=ORDERS),
    partition(ORDERS, 0, [1, 2]),
    partition(ORDERS, 1, [2, 1], version=0),
    partition(ORDERS, 10, [1]),
    make_record(
        T.PARTITION_CHANGE,
        2,
        partition_id=0,
        topic_id=ORDERS,
        isr=[1],
        eligible_leader_replicas=[2],
        last_known_elr=[2],
    ),
    config(4, "", "log.retention.ms", "1000"),
    config(4, "1", "num.io.threads", "8"),
    config(2, "orders", "min.insync.replicas", "2"),
    make_record(T.PRODUCER_IDS, broker_id=1, broker_epoch=11, next_producer_id=2000),
]
AUDIT_TOPIC = [make_record(T.TOPIC, name="audit", topic_id=AUDIT), partition(AUDIT, 0, [2])]


def values(records: list[ApiMessageAndVersion]) -> list[bytes]:
    return [encode_record(r) for r in records]


def data_batch(records: list[ApiMessageAndVersion], ts: int = TS) -> bytes:
    return build_batch([SimpleRecord(value=v) for v in values(records)], timestamp_ms=ts)


def leader_change() -> bytes:
    return build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(1, [1], [1]),
        base_offset=0,
        partition_leader_epoch=EPOCH,
        timestamp_ms=TS,
    )


def write_log(partition_dir: Path, batches: list[bytes]) -> None:
    """Appends with the server's own log writer (offsets and epochs assigned by ``MetadataLog``)."""
    with MetadataLog(partition_dir) as log:
        for batch in batches:
            log.append_as_leader(batch, EPOCH)
        log.flush()


def write_snapshot(directory: Path, snapshot_id: OffsetAndEpoch, records: list[bytes], ts: int = TS) -> Path:
    raw = FileRawSnapshotWriter(directory, snapshot_id)
    writer = SnapshotWriter(raw, ts)
    writer.append(records)
    writer.freeze()
    return directory / f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}.checkpoint"


FULL_LOG = [leader_change(), data_batch(FEATURES), data_batch(CLUSTER), data_batch(TOPICS)]
# offsets: 0 leader change; 1-4 features; 5-7 cluster; 8-16 topics
LAST_OFFSET = 16


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A formatted-looking metadata.log.dir with the partition directory inside."""
    root = tmp_path / "metadata"
    write_log(root / "__cluster_metadata-0", FULL_LOG)
    return root


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    loader = MetadataLoader()
    loader.handle_batch(1, EPOCH, TS, values(FEATURES + CLUSTER + TOPICS))
    directory = tmp_path / "snap"
    directory.mkdir()
    return write_snapshot(directory, OffsetAndEpoch(42, EPOCH), snapshot_records_bytes(loader.image))


def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = metadata_shell.main(
        list(argv), out=out, err=err, stdin=io.StringIO(stdin) if stdin is not None else None
    )
    return code, out.getvalue(), err.getvalue()


def cat(source: Path, path: str, flag: str = "--log-dir") -> str:
    code, out, err = run(flag, str(source), "cat", path)
    assert code == 0, err
    return out.rstrip("\n")


# -----------------------------------------------------------------------------------------------
# Kafka's strings


BROKER_1 = (
    f"BrokerRegistration(id=1, epoch=11, incarnationId={b64(INCARNATION_1)}, "
    "listeners=[Endpoint(listenerName='EXTERNAL', securityProtocol=SSL, host='b1.example', port=9094), "
    "Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='b1', port=9092)], "
    "supportedFeatures={eligible.leader.replicas.version: 0-1, metadata.version: 1-25}, rack=Optional[r1], "
    "fenced=false, inControlledShutdown=false, isMigratingZkBroker=false, "
    f"directories=[{b64(DIR_1)}, {b64(DIR_2)}])"
)
BROKER_2 = (
    f"BrokerRegistration(id=2, epoch=12, incarnationId={b64(INCARNATION_2)}, "
    "listeners=[Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='b2', port=9092)], "
    "supportedFeatures={group.version: 1+, metadata.version: 7}, rack=Optional.empty, "
    "fenced=true, inControlledShutdown=false, isMigratingZkBroker=false, "
    f"directories=[{b64(DIR_B2)}])"
)
PARTITION_0 = (
    f"PartitionRegistration(replicas=[1, 2], directories=[{b64(DIR_2)}, {b64(DIR_B2)}], isr=[1], "
    "removingReplicas=[], addingReplicas=[], elr=[2], lastKnownElr=[2], leader=1, "
    "leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=1)"
)
# A PartitionRecord v0 has no directories: Kafka shows MIGRATING (the zero id) per replica.
PARTITION_1 = (
    "PartitionRegistration(replicas=[2, 1], directories=[AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], "
    "isr=[2, 1], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, "
    "leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0)"
)


def test_broker_registration_prints_as_kafkas_to_string(log_dir: Path) -> None:
    # Listeners and features sorted by name, directories in Kafka's (signed) Uuid order.
    assert cat(log_dir, "/image/cluster/brokers/1") == BROKER_1
    assert cat(log_dir, "/image/cluster/brokers/2") == BROKER_2


def test_controller_registration(log_dir: Path) -> None:
    assert cat(log_dir, "/image/cluster/controllers/3000") == (
        f"ControllerRegistration(id=3000, incarnationId={b64(INCARNATION_2)}, zkMigrationReady=false, "
        "listeners=[Endpoint(listenerName='CONTROLLER', securityProtocol=PLAINTEXT, host='c1', port=9093)], "
        "supportedFeatures={metadata.version: 1-25})"
    )


def test_partitions_by_name_and_by_id(log_dir: Path) -> None:
    assert cat(log_dir, "/image/topics/byName/orders/0") == PARTITION_0
    assert cat(log_dir, "/image/topics/byName/orders/1") == PARTITION_1
    assert cat(log_dir, "/image/topics/byName/orders/name") == "orders"
    assert cat(log_dir, "/image/topics/byName/orders/id") == b64(ORDERS)
    assert cat(log_dir, f"/image/topics/byId/{b64(ORDERS)}/0") == PARTITION_0
    assert cat(log_dir, f"/image/topics/byId/{b64(ORDERS)}/name") == "orders"


def test_partition_string_shows_recovering_and_reassignment() -> None:
    from kraft.metadata.partition import PartitionRegistration

    p = PartitionRegistration(
        replicas=(1, 2, 3),
        isr=(1,),
        adding_replicas=(3,),
        removing_replicas=(2,),
        leader=1,
        leader_recovery_state=1,
        leader_epoch=7,
        partition_epoch=9,
    )
    assert mt.partition_registration_string(p) == (
        "PartitionRegistration(replicas=[1, 2, 3], directories=[AAAAAAAAAAAAAAAAAAAAAA, "
        "AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], isr=[1], removingReplicas=[2], addingReplicas=[3], "
        "elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERING, leaderEpoch=7, partitionEpoch=9)"
    )


def test_features(log_dir: Path) -> None:
    code, out, _ = run("--log-dir", str(log_dir), "ls", "/image/features")
    assert code == 0
    assert out.splitlines() == [
        "finalized_eligible.leader.replicas.version",
        "finalized_group.version",
        "metadataVersion",
        "zkMigrationState",
    ]
    assert cat(log_dir, "/image/features/metadataVersion") == "4.0-IV3"
    assert cat(log_dir, "/image/features/zkMigrationState") == "NONE"
    assert cat(log_dir, "/image/features/finalized_group.version") == "1"
    # kraft's unlisted aliases: the level by the feature's own name.
    assert cat(log_dir, "/image/features/metadata.version") == "25"
    assert cat(log_dir, "/image/features/eligible.leader.replicas.version") == "1"


def test_configs_use_kafkas_resource_names(log_dir: Path) -> None:
    code, out, _ = run("--log-dir", str(log_dir), "ls", "/image/configs")
    assert code == 0
    # The cluster default broker resource is the bare type, as Kafka's ConfigurationsImageNode names it.
    assert out.splitlines() == ["BROKER", "BROKER:1", "TOPIC:orders"]
    assert cat(log_dir, "/image/configs/BROKER/log.retention.ms") == "1000"
    assert cat(log_dir, "/image/configs/BROKER:/log.retention.ms") == "1000"  # Kafka accepts both
    assert cat(log_dir, "/image/configs/BROKER:1/num.io.threads") == "8"
    assert cat(log_dir, "/image/configs/TOPIC:orders/min.insync.replicas") == "2"


def test_provenance_producer_ids_and_local(log_dir: Path) -> None:
    assert cat(log_dir, "/image/provenance") == (
        f"offset {LAST_OFFSET}, epoch {EPOCH}, time 2024-10-25T03:33:01.123Z[UTC]"
    )
    assert cat(log_dir, "/image/producerIds/nextProducerId") == "2000"
    from kraft import __version__

    assert cat(log_dir, "/local/version") == __version__
    assert cat(log_dir, "/local/commitId") == "unknown"


def test_provenance_time_follows_javas_iso_zoned_format() -> None:
    from kraft.metadata.image import MetadataProvenance

    def text(ms: int) -> str:
        return mt.provenance_string(MetadataProvenance(last_offset=1, last_epoch=2, last_append_ms=ms))

    assert text(1000) == "offset 1, epoch 2, time 1970-01-01T00:00:01Z[UTC]"
    assert text(1230) == "offset 1, epoch 2, time 1970-01-01T00:00:01.23Z[UTC]"
    assert text(-1) == "offset 1, epoch 2, time 1969-12-31T23:59:59.999Z[UTC]"


def test_empty_image_shows_kafkas_defaults() -> None:
    from kraft.metadata.image import MetadataImage

    root = mt.root_node(MetadataImage.EMPTY, version="x")
    leaf = mt.resolve(root, "/", "/image/features/metadataVersion")[0].node
    assert isinstance(leaf, mt.Leaf) and leaf.text == "3.0-IV1"  # FeaturesImage.EMPTY
    leaf = mt.resolve(root, "/", "/image/producerIds/nextProducerId")[0].node
    assert isinstance(leaf, mt.Leaf) and leaf.text == "-1"


# -----------------------------------------------------------------------------------------------
# Commands


def test_ls_lists_sorted_as_strings(log_dir: Path) -> None:
    code, out, _ = run("--log-dir", str(log_dir), "ls", "/")
    assert (code, out) == (0, "image\nlocal\n")
    code, out, _ = run("--log-dir", str(log_dir), "ls", "/image")
    assert out.split() == ["cluster", "configs", "features", "producerIds", "provenance", "scram", "topics"]
    code, out, _ = run("--log-dir", str(log_dir), "ls", "/image/topics/byName/orders")
    assert out.split() == ["0", "1", "10", "id", "name"]  # Kafka sorts partition names as strings


def test_ls_of_files_and_several_directories_uses_kafkas_layout(log_dir: Path) -> None:
    code, out, _ = run(
        "--log-dir", str(log_dir), "ls", "/image/provenance", "/image/cluster", "/image/topics"
    )
    assert code == 0
    assert out == "provenance\n\ncluster:\nbrokers\ncontrollers\n\ntopics:\nbyId\nbyName\n"


def test_ls_columns_follow_kafkas_schema() -> None:
    schema = metadata_shell._column_schema
    assert schema(None, ["abc", "def", "ghi"]) == (1, 3, [0])
    assert schema(0, ["abc", "def"]) == (1, 2, [0])
    assert schema(80, ["a", "abcdef", "beta"]) == (3, 1, [3, 8, 6])
    assert schema(18, ["alphabet", "beta", "gamma", "theta", "zeta"]) == (2, 3, [10, 7])

    def directory(names: list[str]) -> mt.Directory:
        return mt.Directory(lambda: names, lambda n: mt.Leaf(n, n) if n in names else None)

    tree = mt.Directory(
        lambda: ["foo", "foobarbaz", "quux", "dir", "other"],
        lambda n: {
            "dir": directory(["supercalifragalistic"]),
            "other": directory(["capability", "delegation", "elephant", "fungible", "green"]),
        }.get(n, mt.Leaf(n, n)),
    )
    out = io.StringIO()
    shell = metadata_shell.Shell(tree, out, io.StringIO(), screen_width=18)
    assert shell.run(["ls", "foo", "foobarbaz", "quux", "dir", "other"])
    assert out.getvalue().splitlines() == [
        "foo        quux",
        "foobarbaz  ",
        "",
        "dir:",
        "supercalifragalistic",
        "",
        "other:",
        "capability",
        "delegation",
        "elephant",
        "fungible",
        "green",
    ]


def test_tree_prints_names_and_indented_values(log_dir: Path) -> None:
    code, out, _ = run("--log-dir", str(log_dir), "tree", "/image/topics/byName/orders")
    assert code == 0
    assert out.splitlines()[:4] == ["0:", f"  {PARTITION_0}", "1:", f"  {PARTITION_1}"]
    assert out.splitlines()[-4:] == ["id:", f"  {b64(ORDERS)}", "name:", "  orders"]
    code, out, _ = run("--log-dir", str(log_dir), "tree", "/image/configs")
    assert out.splitlines() == [
        "BROKER:",
        "  log.retention.ms:",
        "    1000",
        "BROKER:1:",
        "  num.io.threads:",
        "    8",
        "TOPIC:orders:",
        "  min.insync.replicas:",
        "    2",
    ]


def test_find_prints_every_path(log_dir: Path) -> None:
    code, out, _ = run("--log-dir", str(log_dir), "find", "/image/cluster")
    assert code == 0
    assert out.splitlines() == [
        "/image/cluster",
        "/image/cluster/brokers",
        "/image/cluster/brokers/1",
        "/image/cluster/brokers/2",
        "/image/cluster/controllers",
        "/image/cluster/controllers/3000",
    ]
    code, out, _ = run("--log-dir", str(log_dir), "find")
    assert out.splitlines()[:3] == [".", "./image", "./image/cluster"]


def test_globs_match_within_one_component(log_dir: Path) -> None:
    code, out, _ = run("--log-dir", str(log_dir), "cat", "/image/cluster/brokers/*")
    assert (code, out.splitlines()) == (0, [BROKER_1, BROKER_2])
    code, out, _ = run("--log-dir", str(log_dir), "cat", "/image/topics/byName/orders/{0,1}")
    assert out.splitlines() == [PARTITION_0, PARTITION_1]
    code, out, _ = run("--log-dir", str(log_dir), "cat", "/image/features/?etadataVersion")
    assert out == "4.0-IV3\n"


def test_json_output(log_dir: Path) -> None:
    code, out, _ = run("--log-dir", str(log_dir), "--json", "ls", "/image/topics/byName")
    assert (code, json.loads(out)) == (0, ["orders"])
    code, out, _ = run("--log-dir", str(log_dir), "cat", "/image/cluster/brokers/1", "--json")
    value = json.loads(out)
    assert value["path"] == "/image/cluster/brokers/1"
    assert value["value"] == {
        "id": 1,
        "epoch": 11,
        "incarnationId": b64(INCARNATION_1),
        "listeners": [
            {"name": "EXTERNAL", "securityProtocol": "SSL", "host": "b1.example", "port": 9094},
            {"name": "PLAINTEXT", "securityProtocol": "PLAINTEXT", "host": "b1", "port": 9092},
        ],
        "supportedFeatures": {
            "eligible.leader.replicas.version": {"minVersion": 0, "maxVersion": 1},
            "metadata.version": {"minVersion": 1, "maxVersion": 25},
        },
        "rack": "r1",
        "fenced": False,
        "inControlledShutdown": False,
        "isMigratingZkBroker": False,
        "directories": [b64(DIR_1), b64(DIR_2)],
    }
    code, out, _ = run("--log-dir", str(log_dir), "--json", "cat", "/image/topics/byName/orders/0")
    assert json.loads(out)["value"] == {
        "replicas": [1, 2],
        "directories": [b64(DIR_2), b64(DIR_B2)],
        "isr": [1],
        "removingReplicas": [],
        "addingReplicas": [],
        "elr": [2],
        "lastKnownElr": [2],
        "leader": 1,
        "leaderRecoveryState": "RECOVERED",
        "leaderEpoch": 0,
        "partitionEpoch": 1,
    }
    code, out, _ = run("--log-dir", str(log_dir), "--json", "tree", "/image/features")
    assert json.loads(out) == {
        "path": "/image/features",
        "tree": {
            "finalized_eligible.leader.replicas.version": 1,
            "finalized_group.version": 1,
            "metadataVersion": "4.0-IV3",
            "zkMigrationState": "NONE",
        },
    }
    code, out, _ = run("--log-dir", str(log_dir), "--json", "cat", "/image/provenance")
    assert json.loads(out)["value"] == {
        "lastContainedOffset": LAST_OFFSET,
        "lastContainedEpoch": EPOCH,
        "lastContainedLogTimeMs": TS,
    }
    code, out, _ = run("--log-dir", str(log_dir), "--json", "find", "/image/cluster/controllers")
    assert json.loads(out) == ["/image/cluster/controllers", "/image/cluster/controllers/3000"]


def test_unknown_paths_and_commands_fail_clearly(log_dir: Path) -> None:
    code, out, err = run("--log-dir", str(log_dir), "cat", "/image/topics/byName/nope")
    assert (code, out) == (1, "")
    assert err == "cat: /image/topics/byName/nope: No such file or directory.\n"
    code, out, err = run("--log-dir", str(log_dir), "cat", "/image/topics")
    assert (code, err) == (1, "cat: /image/topics: Is a directory\n")
    code, out, err = run("--log-dir", str(log_dir), "ls", "/image/nope")
    assert (code, err) == (1, "ls: /image/nope: no such file or directory.\n")
    code, out, err = run("--log-dir", str(log_dir), "tree", "/nope")
    assert (code, err) == (1, "tree: /nope: No such file or directory.\n")
    code, out, err = run("--log-dir", str(log_dir), "frobnicate", "/")
    assert code == 1 and "unknown command 'frobnicate'" in err and "ls" in err
    code, out, err = run("--log-dir", str(log_dir), "cat", f"/image/topics/byId/{b64(AUDIT)}")
    assert code == 1 and "No such file" in err
    code, out, err = run("--log-dir", str(log_dir), "cat", "/image/topics/byId/not-a-uuid/name")
    assert code == 1
    code, out, err = run("--log-dir", str(log_dir), "history")
    assert code == 1 and "requires a shell" in err
    # Only the good paths print; the bad one is named; the status says something failed.
    code, out, err = run("--log-dir", str(log_dir), "cat", "/image/topics/byName/orders/name", "/x")
    assert (code, out, err) == (1, "orders\n", "cat: /x: No such file or directory.\n")


def test_script_on_stdin_navigates_with_cd_and_keeps_history(log_dir: Path) -> None:
    script = (
        "cd /image/topics/byName/orders\npwd\ncat name\ncd ..\nls\ncd orders/name\nhistory 2\nexit\nls /\n"
    )
    code, out, err = run("--log-dir", str(log_dir), stdin=script)
    assert out.splitlines() == [
        "/image/topics/byName/orders",
        "orders",
        "orders",
        "    6  cd orders/name",
        "    7  history 2",
    ]
    # A piped script that hit an error fails (exit stops it before the last ls).
    assert err == "cd: orders/name: not a directory.\n"
    assert code == 1
    code, out, err = run("--log-dir", str(log_dir), stdin="cd /image\n\nls cluster\n")
    assert (code, out, err) == (0, "brokers\ncontrollers\n", "")
    code, out, err = run("--log-dir", str(log_dir), stdin="help\nman ls\ncat 'unclosed\n")
    assert "Welcome to the kraft metadata shell" in out and "usage: ls [TARGET...]" in out
    assert code == 1 and "cannot parse the command" in err


def test_dispatcher_runs_the_tool(log_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["metadata-shell", "--log-dir", str(log_dir), "cat", "/image/features/metadataVersion"]
    assert kraft_main.main(argv) == 0
    assert capsys.readouterr().out == "4.0-IV3\n"


# -----------------------------------------------------------------------------------------------
# Loading


def test_snapshot_file(snapshot: Path) -> None:
    assert cat(snapshot, "/image/cluster/brokers/1", "--snapshot") == BROKER_1
    assert cat(snapshot, "/image/topics/byName/orders/0", "--snapshot") == PARTITION_0
    assert cat(snapshot, "/image/configs/BROKER/log.retention.ms", "--snapshot") == "1000"
    # A snapshot ending at offset 42 contains offsets up to 41 (Kafka's lastContainedLogOffset).
    assert cat(snapshot, "/image/provenance", "--snapshot") == (
        f"offset 41, epoch {EPOCH}, time 2024-10-25T03:33:01.123Z[UTC]"
    )


def test_bootstrap_checkpoint_loads_as_a_snapshot(tmp_path: Path) -> None:
    write_bootstrap_checkpoint(tmp_path, bootstrap_metadata())
    path = str(tmp_path / "bootstrap.checkpoint")
    code, out, err = run("-s", path, "cat", "/image/features/metadataVersion")
    assert (code, out) == (0, "4.0-IV3\n"), err


def test_a_log_segment_can_be_given_as_snapshot(log_dir: Path) -> None:
    segment = log_dir / "__cluster_metadata-0" / "00000000000000000000.log"
    assert cat(segment, "/image/cluster/brokers/2", "--snapshot") == BROKER_2


def test_log_dir_is_the_partition_directory_or_its_parent(log_dir: Path) -> None:
    for directory in (log_dir, log_dir / "__cluster_metadata-0"):
        assert cat(directory, "/image/topics/byName/orders/1") == PARTITION_1


def test_log_dir_loads_the_latest_snapshot_then_the_log_after_it(tmp_path: Path) -> None:
    partition_dir = tmp_path / "__cluster_metadata-0"
    write_log(partition_dir, [*FULL_LOG, data_batch(AUDIT_TOPIC, ts=TS + 1000)])
    # The snapshot at offset 17 (end of the topics batch) says something the log prefix does not:
    # seeing it proves the prefix was not replayed.
    loader = MetadataLoader()
    marker = make_record(T.TOPIC, name="from-snapshot", topic_id=ORDERS)
    loader.handle_batch(1, EPOCH, TS, values([*FEATURES, marker]))
    write_snapshot(
        partition_dir, OffsetAndEpoch(LAST_OFFSET + 1, EPOCH), snapshot_records_bytes(loader.image)
    )
    write_snapshot(partition_dir, OffsetAndEpoch(5, EPOCH), [])  # older: ignored
    code, out, err = run("--log-dir", str(partition_dir), "ls", "/image/topics/byName")
    assert (code, out.split()) == (0, ["audit", "from-snapshot"]), err
    assert cat(partition_dir, "/image/provenance") == (
        f"offset {LAST_OFFSET + 2}, epoch {EPOCH}, time 2024-10-25T03:33:02.123Z[UTC]"
    )


def test_open_transaction_at_the_end_is_left_out_with_a_note(tmp_path: Path) -> None:
    partition_dir = tmp_path / "__cluster_metadata-0"
    write_log(
        partition_dir,
        [
            *FULL_LOG,
            data_batch([make_record(T.BEGIN_TRANSACTION, name="t"), *AUDIT_TOPIC]),
        ],
    )
    code, out, err = run("--log-dir", str(partition_dir), "ls", "/image/topics/byName")
    assert (code, out) == (0, "orders\n")
    assert "inside a metadata transaction" in err


def test_torn_tail_is_skipped_with_a_note(log_dir: Path) -> None:
    segment = log_dir / "__cluster_metadata-0" / "00000000000000000000.log"
    tail = data_batch(AUDIT_TOPIC)
    with open(segment, "ab") as fh:
        fh.write(tail[: len(tail) // 2])
    code, out, err = run("--log-dir", str(log_dir), "ls", "/image/topics/byName")
    assert (code, out) == (0, "orders\n")
    assert "skipped" in err and "torn write" in err


def test_corrupt_last_batch_is_a_torn_tail_but_a_corrupt_middle_batch_fails(tmp_path: Path) -> None:
    partition_dir = tmp_path / "__cluster_metadata-0"
    write_log(partition_dir, FULL_LOG)
    segment = partition_dir / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[-3] ^= 0xFF  # inside the last batch's records: its CRC no longer matches
    segment.write_bytes(bytes(data))
    code, out, err = run("--log-dir", str(partition_dir), "ls", "/image/topics/byName")
    assert (code, out) == (0, "")
    assert "CRC" in err
    segment.write_bytes(bytes(data) + FULL_LOG[1])  # a valid batch after the corrupt one
    code, out, err = run("--log-dir", str(partition_dir), "ls", "/")
    assert code == 1 and out == ""
    assert "00000000000000000000.log: position" in err and "CRC" in err


def test_replay_errors_are_reported_and_fail(tmp_path: Path) -> None:
    partition_dir = tmp_path / "__cluster_metadata-0"
    change = make_record(T.PARTITION_CHANGE, 2, partition_id=0, topic_id=AUDIT, leader=1)
    write_log(partition_dir, [*FULL_LOG, data_batch([change])])
    code, out, err = run("--log-dir", str(partition_dir), "ls", "/")
    assert code == 1 and out == ""
    assert "cannot replay PartitionChangeRecord at offset 17" in err
    assert "Traceback" not in err


def test_a_snapshot_ending_inside_a_batch_replays_the_rest_of_it(tmp_path: Path) -> None:
    partition_dir = tmp_path / "__cluster_metadata-0"
    write_log(partition_dir, FULL_LOG)
    # Offsets 1-4 are one batch (metadata.version, ELR, group.version, ZK state); the snapshot at
    # offset 3 holds the first two, the log supplies group.version at offset 3.
    loader = MetadataLoader()
    loader.handle_batch(1, EPOCH, TS, values(FEATURES[:2]))
    write_snapshot(partition_dir, OffsetAndEpoch(3, EPOCH), snapshot_records_bytes(loader.image))
    assert cat(partition_dir, "/image/features/finalized_group.version") == "1"
    assert cat(partition_dir, "/image/cluster/brokers/1") == BROKER_1


def test_missing_offsets_fail(tmp_path: Path) -> None:
    partition_dir = tmp_path / "__cluster_metadata-0"
    partition_dir.mkdir()
    segment = partition_dir / "00000000000000000020.log"
    segment.write_bytes(assign_offsets_and_epoch(data_batch(AUDIT_TOPIC), 20, EPOCH))
    code, out, err = run("--log-dir", str(partition_dir), "ls", "/")
    assert (code, out) == (1, "")
    assert "the log jumps from offset 0 to 20" in err
    write_snapshot(partition_dir, OffsetAndEpoch(10, EPOCH), [])
    code, out, err = run("--log-dir", str(partition_dir), "ls", "/")
    assert code == 1 and "the log jumps from offset 10 to 20" in err


def test_bad_sources_fail_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run("--log-dir", str(tmp_path / "nope"), "ls")
    assert (code, err) == (1, f"kraft metadata-shell: {tmp_path / 'nope'}: no such directory\n")
    code, _, err = run("--log-dir", str(tmp_path), "ls")
    assert code == 1 and "holds no snapshot" in err
    code, _, err = run("--snapshot", str(tmp_path / "x.checkpoint"), "ls")
    assert code == 1 and "no such file" in err
    code, _, err = run("--snapshot", str(tmp_path), "ls")
    assert code == 1 and "use --log-dir" in err
    bad = tmp_path / "00000000000000000010-0000000001.checkpoint"
    bad.write_bytes(b"\x00" * 10)
    code, _, err = run("--snapshot", str(bad), "ls")
    assert code == 1 and "cannot read snapshot" in err and "Traceback" not in err
    code, _, _ = run("ls")
    assert code == 2 and "--snapshot" in capsys.readouterr().err  # argparse writes to sys.stderr


def test_help_mentions_the_high_watermark(capsys: pytest.CaptureFixture[str]) -> None:
    assert metadata_shell.main(["--help"]) == 0
    assert "high watermark" in capsys.readouterr().out
