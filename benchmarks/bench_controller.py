"""Controller benchmark: metadata replay in process, then 100,000 partitions on three real
controllers (fsync on) and a kill -9 failover.

    python benchmarks/bench_controller.py [--partitions N] [--quick] [--json] [--workdir DIR]

Prints, each next to a baseline measured in the same run:

* replay: records/s of MetadataLoader over a metadata log of N partitions (RF 3), against the raw
  decode rate of the same batches (RecordBatch + ApiMessageAndVersion decode, no image);
* image: bytes of image per partition (tracemalloc), snapshot size and load time;
* create: CreateTopics through the active controller in requests of ``--per-request`` partitions
  until N exist (RF 3, 3 controllers, fsync on): partitions/s and records/s, against the in-process
  rate of the same handler + replay (no raft, no disk, no network) as the ceiling;
* failover: kill -9 of the active controller to the next successful CreateTopics, against the raft
  election alone (kill -9 to a new leader in DescribeQuorum) in the same trial.

Reported, not gated.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent / "src"))  # after PYTHONPATH (a compiled build)

from kraft.cli import cluster as cluster_cli
from kraft.cli import cluster_processes as processes
from kraft.client.admin import AdminClient
from kraft.client.connection import AdminError
from kraft.client.controller import ControllerClient
from kraft.common.uuids import random_uuid, uuid_to_base64
from kraft.controller.replication_control import ReplicationControl
from kraft.metadata.configs import ConfigResolver
from kraft.metadata.image import MetadataLoader
from kraft.metadata.image_snapshot import snapshot_records_bytes
from kraft.metadata.records import MetadataRecordType, decode_record, encode_record, make_record
from kraft.protocol.messages import create_topics
from kraft.records.batch import SimpleRecord, build_batch, decode_batch

PARTITIONS_PER_TOPIC = 100


# ------------------------------------------------------------------------------------------ replay


def build_log(partitions: int) -> list[tuple[int, bytes]]:
    """Encoded batches (base offset, bytes) of a metadata log: bootstrap, 3 brokers, then topics of
    100 partitions (RF 3), one topic per batch."""
    records = [
        [
            make_record(MetadataRecordType.FEATURE_LEVEL, name="metadata.version", feature_level=25),
            make_record(
                MetadataRecordType.FEATURE_LEVEL, name="eligible.leader.replicas.version", feature_level=1
            ),
        ],
    ]
    for b in (1, 2, 3):
        records.append(
            [
                make_record(
                    MetadataRecordType.REGISTER_BROKER,
                    broker_id=b,
                    incarnation_id=uuid.UUID(int=b),
                    broker_epoch=len(records),
                    end_points=[],
                    features=[],
                    rack=None,
                    fenced=False,
                    log_dirs=[uuid.UUID(int=(b << 64) | 5)],
                )
            ]
        )
    rng = random.Random(1)
    topics = partitions // PARTITIONS_PER_TOPIC
    for t in range(topics):
        tid = uuid.UUID(int=rng.getrandbits(128))
        batch = [make_record(MetadataRecordType.TOPIC, name=f"topic-{t:05d}", topic_id=tid)]
        for p in range(PARTITIONS_PER_TOPIC):
            replicas = [1 + (p + i) % 3 for i in range(3)]
            batch.append(
                make_record(
                    MetadataRecordType.PARTITION,
                    partition_id=p,
                    topic_id=tid,
                    replicas=replicas,
                    isr=replicas,
                    leader=replicas[0],
                    leader_epoch=0,
                    partition_epoch=0,
                    directories=[uuid.UUID(int=(r << 64) | 5) for r in replicas],
                )
            )
        records.append(batch)
    out = []
    offset = 0
    for batch in records:
        data = build_batch(
            [SimpleRecord(value=encode_record(r)) for r in batch],
            base_offset=offset,
            partition_leader_epoch=1,
            timestamp_ms=0,
        )
        out.append((offset, data))
        offset += len(batch)
    return out


def bench_replay(partitions: int) -> dict[str, Any]:
    log = build_log(partitions)
    n_records = sum(len(decode_batch(d).records) for _, d in log)
    t0 = time.perf_counter()
    for _, data in log:
        for r in decode_batch(data).records:
            decode_record(r.value or b"")
    raw_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    loader = MetadataLoader()
    for base, data in log:
        batch = decode_batch(data)
        loader.handle_batch(base, 1, 0, [r.value or b"" for r in batch.records])
    replay_s = time.perf_counter() - t0
    # Memory in a second pass: tracemalloc slows allocation down several times.
    values = [(base, [r.value or b"" for r in decode_batch(data).records]) for base, data in log]
    tracemalloc.start()
    measured = MetadataLoader()
    for base, batch_values in values:
        measured.handle_batch(base, 1, 0, batch_values)
    current, _peak = tracemalloc.get_traced_memory()
    # The indexes of spec 1.6 are built on first query; count them too (a controller that fences
    # a broker or a broker that serves Metadata has them all).
    mi = measured.image
    for b in (1, 2, 3):
        mi.partitions_with_isr_member(b)
    mi.leaderless_partitions()
    mi.imbalanced_partitions()
    mi.reassigning_partitions()
    with_indexes, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del measured
    image = loader.image
    t0 = time.perf_counter()
    snap = snapshot_records_bytes(image)
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = MetadataLoader()
    again.load_snapshot(image.provenance.last_offset + 1, 1, 0, snap)
    load_s = time.perf_counter() - t0
    assert again.image.partition_count == image.partition_count == partitions
    return {
        "records": n_records,
        "raw_decode_records_per_s": n_records / raw_s,
        "replay_records_per_s": n_records / replay_s,
        "replay_vs_raw_decode": raw_s / replay_s,
        "image_bytes_per_partition": current / partitions,
        "image_with_indexes_bytes_per_partition": with_indexes / partitions,
        "snapshot_bytes": sum(len(r) for r in snap),
        "snapshot_records": len(snap),
        "snapshot_write_s": write_s,
        "snapshot_load_s": load_s,
    }


def bench_handler_ceiling(partitions: int, per_request: int) -> dict[str, Any]:
    """CreateTopics handler + replay in process: the controller's CPU ceiling for creation."""
    loader = MetadataLoader()
    boot = [make_record(MetadataRecordType.FEATURE_LEVEL, name="metadata.version", feature_level=25)]
    for b in (1, 2, 3):
        boot.append(
            make_record(
                MetadataRecordType.REGISTER_BROKER,
                broker_id=b,
                incarnation_id=uuid.UUID(int=b),
                broker_epoch=b,
                end_points=[],
                features=[],
                rack=None,
                fenced=False,
                log_dirs=[uuid.UUID(int=(b << 64) | 5)],
            )
        )
    loader.handle_batch(0, 1, 0, [encode_record(r) for r in boot])
    control = ReplicationControl(ConfigResolver({}, 1), random.Random(1))
    cls = create_topics.REQUEST.cls
    offset = len(boot)
    made = 0
    t0 = time.perf_counter()
    records_total = 0
    while made < partitions:
        topics = [
            cls.CreatableTopic(
                name=f"t{made + i * PARTITIONS_PER_TOPIC}",
                num_partitions=PARTITIONS_PER_TOPIC,
                replication_factor=3,
            )
            for i in range(per_request // PARTITIONS_PER_TOPIC)
        ]
        result = control.create_topics(loader.image, cls(topics=topics), 7, is_active=lambda r: True)
        encoded = [encode_record(r) for r in result.records]
        loader.handle_batch(offset, 1, 0, encoded)
        offset += len(encoded)
        records_total += len(encoded)
        made += per_request
    elapsed = time.perf_counter() - t0
    return {"partitions_per_s": made / elapsed, "records_per_s": records_total / elapsed}


# ------------------------------------------------------------------------------------------ processes


class Cluster:
    def __init__(self, root: Path) -> None:
        self.spec = cluster_cli.plan_new_cluster(root, 3, 0, {}, cluster_id=uuid_to_base64(random_uuid()))
        root.mkdir(parents=True, exist_ok=True)
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def start(self, node_id: int) -> None:
        node = self.spec.node(node_id)
        Path(node.node_dir).mkdir(parents=True, exist_ok=True)
        node.config_path.write_text(cluster_cli.node_properties(self.spec, node))
        if not (Path(node.log_dir) / "meta.properties").exists():
            cluster_cli.format_node(self.spec, node)
        self.procs[node_id] = processes.start_server(node.config_path, node.server_log)

    def leader(
        self, among: list[int] | None = None, min_epoch: int = 0, timeout_s: float = 60
    ) -> tuple[int, int]:
        addresses = [self.spec.node(i) for i in (among or [n.id for n in self.spec.nodes])]
        from kraft.client.connection import Address

        boot = [Address("127.0.0.1", n.port) for n in addresses]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                info = AdminClient(boot, timeout_ms=500, request_timeout_ms=300).describe_quorum()
                if info.leader_epoch >= min_epoch and info.leader_id in [n.id for n in addresses]:
                    return info.leader_id, info.leader_epoch
            except AdminError:
                pass
            time.sleep(0.005)
        raise RuntimeError("no leader")

    def kill_all(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
        for p in self.procs.values():
            p.wait()


def heartbeat_loop(client: ControllerClient, epochs: dict[int, int], stop: threading.Event) -> None:
    while not stop.is_set():
        for b, e in epochs.items():
            with contextlib.suppress(AdminError):
                client.heartbeat(b, e, 1 << 60)
        stop.wait(1.0)


def bench_processes(root: Path, partitions: int, per_request: int, clients: int) -> dict[str, Any]:
    cluster = Cluster(root)
    for n in cluster.spec.nodes:
        cluster.start(n.id)
    out: dict[str, Any] = {}
    try:
        leader, epoch = cluster.leader()
        from kraft.client.connection import Address

        boot = [Address("127.0.0.1", n.port) for n in cluster.spec.nodes]
        client = ControllerClient(boot, timeout_s=60)
        epochs = {}
        for b in (101, 102, 103):
            r = client.register_broker(
                b, cluster.spec.cluster_id, incarnation_id=uuid.uuid4(), log_dir=uuid.uuid4()
            )
            epochs[b] = r.broker_epoch
        for b, e in epochs.items():
            client.heartbeat(b, e, 1 << 60)
        stop = threading.Event()
        hb = threading.Thread(
            target=heartbeat_loop, args=(ControllerClient(boot, timeout_s=5), epochs, stop), daemon=True
        )
        hb.start()
        # ``clients`` connections send CreateTopics concurrently, so the active controller handles
        # the next request while the previous batch replicates and commits.
        names = [f"bench-{i:07d}" for i in range(0, partitions, PARTITIONS_PER_TOPIC)]
        per = per_request // PARTITIONS_PER_TOPIC
        requests = [names[i : i + per] for i in range(0, len(names), per)]
        failures: list[str] = []

        def worker(chunks: list[list[str]]) -> None:
            own = ControllerClient(boot, timeout_s=60)
            for chunk in chunks:
                r = own.create_topics([(n, PARTITIONS_PER_TOPIC, 3, {}) for n in chunk], timeout_s=60)
                failures.extend(
                    f"{t.name}: {t.error_code} {t.error_message}" for t in r.topics if t.error_code
                )
            own.close()

        t0 = time.perf_counter()
        threads = [
            threading.Thread(target=worker, args=(requests[i::clients],), daemon=True) for i in range(clients)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        if failures:
            raise RuntimeError(f"CreateTopics failed: {failures[0]}")
        made = len(names) * PARTITIONS_PER_TOPIC
        out["create"] = {
            "partitions": made,
            "clients": clients,
            "seconds": elapsed,
            "partitions_per_s": made / elapsed,
            "records_per_s": (made + made // PARTITIONS_PER_TOPIC) / elapsed,
        }
        # Failover: kill -9 the active controller; time to a new raft leader and to a served CreateTopics.
        leader, epoch = cluster.leader()
        killed = time.monotonic()
        cluster.procs[leader].kill()
        survivors = [n.id for n in cluster.spec.nodes if n.id != leader]
        new_leader, _ = cluster.leader(among=survivors, min_epoch=epoch + 1)
        elected_s = time.monotonic() - killed
        r = client.create_topics([("after-failover", 1, 3, {})], timeout_s=60)
        served_s = time.monotonic() - killed
        assert r.topics[0].error_code == 0, r
        out["failover"] = {
            "raft_election_s": elected_s,
            "first_create_topics_s": served_s,
            "beyond_election_s": served_s - elected_s,
            "new_leader": new_leader,
        }
        stop.set()
    finally:
        cluster.kill_all()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--per-request", type=int, default=5_000, help="partitions per CreateTopics request")
    ap.add_argument("--clients", type=int, default=2, help="concurrent CreateTopics connections")
    ap.add_argument("--quick", action="store_true", help="10,000 partitions")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--skip-processes", action="store_true")
    args = ap.parse_args()
    partitions = 10_000 if args.quick else args.partitions
    report: dict[str, Any] = {"partitions": partitions}
    report["replay"] = bench_replay(partitions)
    report["handler_ceiling"] = bench_handler_ceiling(partitions, args.per_request)
    if not args.skip_processes:
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            report.update(bench_processes(Path(tmp), partitions, args.per_request, args.clients))
        report["create"]["vs_handler_ceiling"] = (
            report["create"]["partitions_per_s"] / report["handler_ceiling"]["partitions_per_s"]
        )
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    r = report["replay"]
    print(f"replay of {partitions:,} partitions ({r['records']:,} records):")
    print(
        f"  raw decode {r['raw_decode_records_per_s']:,.0f} records/s; "
        f"replay {r['replay_records_per_s']:,.0f} "
        f"records/s (ratio {r['replay_vs_raw_decode']:.2f})"
    )
    print(
        f"  image {r['image_bytes_per_partition']:,.0f} bytes/partition "
        f"({r['image_with_indexes_bytes_per_partition']:,.0f} with every index built); "
        f"snapshot {r['snapshot_bytes']:,} bytes "
        f"({r['snapshot_records']:,} records), written in {r['snapshot_write_s']:.2f} s, "
        f"loaded in {r['snapshot_load_s']:.2f} s"
    )
    h = report["handler_ceiling"]
    print(
        f"in-process CreateTopics handler + replay: {h['partitions_per_s']:,.0f} partitions/s (the ceiling)"
    )
    if "create" in report:
        c = report["create"]
        print(
            f"create {c['partitions']:,} partitions, RF 3, 3 controllers, fsync on: "
            f"{c['partitions_per_s']:,.0f} "
            f"partitions/s, {c['records_per_s']:,.0f} records/s "
            f"({c['vs_handler_ceiling']:.2f} of the ceiling)"
        )
        f = report["failover"]
        print(
            f"failover (kill -9): raft election {f['raft_election_s'] * 1000:,.0f} ms; first CreateTopics "
            f"{f['first_create_topics_s'] * 1000:,.0f} ms; "
            f"beyond the election {f['beyond_election_s'] * 1000:,.0f} ms"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
