"""What security costs: connection set-up rate and produce throughput per listener, against PLAINTEXT.

One combined node (``kraft server-start``) with four client listeners on the same broker:
PLAINTEXT, SSL, SASL_SSL with PLAIN and SASL_SSL with SCRAM-SHA-512 (users made by
``storage format --add-scram``; throwaway certificates from ``tests/support/tls_certs.py``).

* **Connection set-up**: kraft's blocking ``Connection`` (TCP, TLS handshake, ApiVersions, then the
  SASL login) opened and closed back to back for ``--seconds``, per listener: connections per
  second, and the ratio to PLAINTEXT measured in the same run.
* **Produce**: confluent-kafka (librdkafka) producing ``--records`` records of ``--size`` bytes with
  acks=all to a one-partition topic, per listener: records/s, MB/s and the ratio to PLAINTEXT.

Not part of the test suite. Prints a table, or ``--json``.

    .venv/bin/python benchmarks/bench_security.py [--seconds 5] [--records 200000] [--size 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "src"))  # after PYTHONPATH (a compiled build)
sys.path.insert(0, str(ROOT / "tests" / "support"))

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # noqa: E402
from tls_certs import make_pki  # noqa: E402

from kraft.cli import cluster_processes as processes  # noqa: E402
from kraft.client.connection import Address, Connection  # noqa: E402
from kraft.client.security import client_security  # noqa: E402

LISTENERS = {  # name -> (protocol, client mechanism)
    "PLAIN_TEXT": ("PLAINTEXT", None),
    "TLS": ("SSL", None),
    "SASLPLAIN": ("SASL_SSL", "PLAIN"),
    "SCRAM": ("SASL_SSL", "SCRAM-SHA-512"),
}
USER, PASSWORD = "bench", "bench-secret"
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="{USER}" password="{PASSWORD}" user_{USER}="{PASSWORD}";'
)


def _client_props(listener: str, ca: str) -> dict[str, str]:
    protocol, mechanism = LISTENERS[listener]
    props = {"security.protocol": protocol}
    if "SSL" in protocol:
        props.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": ca})
    if mechanism is not None:
        module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
        props.update(
            {
                "sasl.mechanism": mechanism,
                "sasl.jaas.config": f"org.apache.kafka.common.security.{module} required "
                f'username="{USER}" password="{PASSWORD}";',
            }
        )
    return props


def _confluent(listener: str, port: int, ca: str) -> dict[str, Any]:
    protocol, mechanism = LISTENERS[listener]
    conf: dict[str, Any] = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": protocol}
    if "SSL" in protocol:
        conf["ssl.ca.location"] = ca
    if mechanism is not None:
        conf.update({"sasl.mechanism": mechanism, "sasl.username": USER, "sasl.password": PASSWORD})
    return conf


def start_node(root: Path, ca_dir: Path) -> tuple[Any, dict[str, int]]:
    ports = dict(zip([*LISTENERS, "CONTROLLER"], processes.free_ports(len(LISTENERS) + 1)))
    protocols = {name: protocol for name, (protocol, _) in LISTENERS.items()} | {"CONTROLLER": "PLAINTEXT"}
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{ports['CONTROLLER']}",
        "controller.listener.names": "CONTROLLER",
        "listeners": ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items()),
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in protocols.items()),
        "inter.broker.listener.name": "PLAIN_TEXT",
        "listener.name.saslplain.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.saslplain.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.scram.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(ca_dir / "server.pem"),
        "log.dirs": str(root / "data"),
        "metadata.log.dir": str(root / "meta"),
    }
    config = root / "server.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    cluster_id = processes.run_kraft("storage", "random-uuid", timeout_s=60).stdout.strip()
    scram = f"SCRAM-SHA-512=[name={USER},password={PASSWORD}]"
    done = processes.run_kraft(
        "storage",
        "format",
        "--config",
        str(config),
        "--cluster-id",
        cluster_id,
        "--add-scram",
        scram,
        timeout_s=60,
    )
    if done.returncode != 0:
        raise SystemExit(f"format failed: {done.stderr}")
    proc = processes.start_server(config, root / "server.log")
    deadline = time.monotonic() + 60
    admin = AdminClient(_confluent("PLAIN_TEXT", ports["PLAIN_TEXT"], ""))
    while True:
        try:
            if admin.list_topics(timeout=2).brokers:
                break
        except Exception:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the node did not come up:\n" + (root / "server.log").read_text()[-3000:])
        time.sleep(0.2)
    return proc, ports


def connection_rate(listener: str, port: int, ca: str, seconds: float) -> float:
    security = client_security(_client_props(listener, ca))
    address = Address("127.0.0.1", port)
    Connection(address, 10.0, security=security).close()  # warm-up (and proof that it logs in)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        Connection(address, 10.0, security=security).close()
        count += 1
    return count / (time.perf_counter() - start)


def produce_rate(listener: str, port: int, ca: str, records: int, size: int) -> float:
    topic = f"bench-{listener.lower()}"
    conf = _confluent(listener, port, ca)
    admin = AdminClient(conf)  # kept referenced: a collected client cancels its futures
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({**conf, "acks": "all", "linger.ms": 5, "batch.size": 262_144})
    value = b"x" * size
    start = time.perf_counter()
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(120) != 0:
        raise SystemExit(f"{listener}: records left unacknowledged")
    return records / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per listener, for the set-up rate")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kraft-bench-security-") as tmp:
        root = Path(tmp)
        make_pki(root / "pki")
        ca = str(root / "pki" / "ca.pem")
        proc, ports = start_node(root, root / "pki")
        try:
            rows = []
            for listener in LISTENERS:
                conns = connection_rate(listener, ports[listener], ca, ns.seconds)
                produced = produce_rate(listener, ports[listener], ca, ns.records, ns.size)
                rows.append(
                    {
                        "listener": listener,
                        "protocol": LISTENERS[listener],
                        "conn_per_s": conns,
                        "records_per_s": produced,
                        "mb_per_s": produced * ns.size / 1e6,
                    }
                )
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    base = rows[0]
    for r in rows:
        r["conn_ratio"] = r["conn_per_s"] / base["conn_per_s"]
        r["produce_ratio"] = r["records_per_s"] / base["records_per_s"]
    if ns.json:
        print(
            json.dumps({"machine": platform.platform(), "records": ns.records, "size": ns.size, "rows": rows})
        )
        return 0
    print(f"{'listener':<12} {'protocol':<28} {'conn/s':>8} {'x PT':>6} {'rec/s':>9} {'MB/s':>6} {'x PT':>6}")
    for r in rows:
        protocol = "+".join(p for p in r["protocol"] if p)
        print(
            f"{r['listener']:<12} {protocol:<28} {r['conn_per_s']:>8.0f} {r['conn_ratio']:>6.2f} "
            f"{r['records_per_s']:>9.0f} {r['mb_per_s']:>6.1f} {r['produce_ratio']:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
