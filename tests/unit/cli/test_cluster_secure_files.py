"""``kraft cluster up --secure`` without processes: the throwaway CA and the node certificates, the
files and their modes, the generated server.properties as the server's own parser reads them,
client.properties, the SCRAM users written at format time, and the secure/plaintext misuse."""

from __future__ import annotations

import io
import ipaddress
import ssl
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kraft.cli import cluster, cluster_security, local_ca
from kraft.client.security import client_security
from kraft.common.config import load_properties, parse_properties
from kraft.net.tls import TlsSettings, client_context, server_context
from kraft.security.scram_arguments import parse_scram_argument
from kraft.server.config import parse_server_config
from kraft.server.listener_security import build_client_security, build_listener_auth
from kraft.storage.bootstrap_file import read_bootstrap_checkpoint

CLUSTER_ID = "AAAAAAAAAAAAAAAAAAAAAg"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cluster.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def secure_cluster(
    root: Path, controllers: int = 1, brokers: int = 1, base_port: int = 9093
) -> cluster.ClusterFile:
    """A planned secure cluster with its files (as ``up --secure`` makes them before starting)."""
    spec = cluster.plan_new_cluster(
        root, controllers, base_port, {}, CLUSTER_ID, brokers=brokers, secure=True
    )
    root.mkdir(parents=True, exist_ok=True)
    cluster_security.create(root)
    for node in spec.nodes:
        cluster_security.ensure_keystore(spec.layout, node.id, node.node_dir, spec.host)
    return spec


def handshake(server: ssl.SSLContext, client: ssl.SSLContext, server_hostname: str) -> None:
    """A TLS handshake in memory (no sockets): raises ssl.SSLError when the client refuses."""
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    client_side = client.wrap_bio(c_in, c_out, server_hostname=server_hostname)
    server_side = server.wrap_bio(s_in, s_out, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):
        for name, side, out_bio, peer_in in (
            ("client", client_side, c_out, s_in),
            ("server", server_side, s_out, c_in),
        ):
            if not done[name]:
                try:
                    side.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
            peer_in.write(out_bio.read())
        if all(done.values()):
            return
    raise AssertionError("the handshake did not finish")


# -- the CA ----------------------------------------------------------------------------------------


def test_node_certificates_are_signed_by_the_ca_for_localhost_and_127_0_0_1(tmp_path: Path) -> None:
    ca = local_ca.new_ca("test CA")
    node = local_ca.issue(ca, "kraft node 1")
    ca_cert = x509.load_pem_x509_certificate(ca.certificate)
    cert = x509.load_pem_x509_certificate(node.certificate)
    cert.verify_directly_issued_by(ca_cert)
    assert ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    key = serialization.load_pem_private_key(node.key, password=None)
    assert key.public_key().public_numbers() == cert.public_key().public_numbers()
    # Host-name verification passes for both names, with the CA as the only trust anchor.
    (tmp_path / "node.pem").write_bytes(node.keystore)
    (tmp_path / "ca.pem").write_bytes(ca.certificate)
    server = server_context(TlsSettings(keystore_location=str(tmp_path / "node.pem")))
    client = client_context(TlsSettings(truststore_location=str(tmp_path / "ca.pem")))
    for host in ("localhost", "127.0.0.1"):
        handshake(server, client, host)
    with pytest.raises(ssl.SSLCertVerificationError, match=r"mismatch|doesn't match"):
        handshake(server, client, "example.com")
    other_ca = local_ca.new_ca("another CA")
    (tmp_path / "other.pem").write_bytes(other_ca.certificate)
    stranger = client_context(TlsSettings(truststore_location=str(tmp_path / "other.pem")))
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(server, stranger, "localhost")


# -- the files -------------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_secret_files_are_private_and_client_properties_uses_kafkas_names(tmp_path: Path) -> None:
    spec = secure_cluster(tmp_path)
    layout = spec.layout
    credentials = cluster_security.load_credentials(tmp_path)
    assert mode(layout.tls_dir) == 0o700
    for private in (
        layout.ca_key,
        layout.credentials,
        layout.client_properties,
        layout.librdkafka_properties,
    ):
        assert mode(private) == 0o600, private
    for node in spec.nodes:
        assert mode(layout.keystore(node.node_dir)) == 0o600
    props = load_properties(layout.client_properties)
    assert props == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="admin" password="{credentials.admin_password}";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tmp_path.resolve() / "tls" / "ca.pem"),
    }
    assert Path(props["ssl.truststore.location"]).is_absolute()
    security = client_security(props)  # what --command-config makes of it
    assert (security.protocol, security.mechanism, security.username) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "admin",
    )
    assert load_properties(layout.librdkafka_properties) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": "admin",
        "sasl.password": credentials.admin_password,
        "ssl.ca.location": props["ssl.truststore.location"],
    }
    # Random, distinct, long; never in a repr.
    other = cluster_security.Credentials.random()
    assert len({credentials.admin_password, credentials.node_password, other.admin_password}) == 3
    assert len(credentials.admin_password) >= 32
    assert credentials.admin_password not in repr(credentials)


def test_a_removed_client_file_is_written_again_and_an_existing_one_is_kept(tmp_path: Path) -> None:
    spec = secure_cluster(tmp_path)
    layout = spec.layout
    layout.librdkafka_properties.unlink()
    layout.client_properties.write_text(layout.client_properties.read_text() + "client.id=mine\n")
    cluster_security.ensure_client_files(layout, spec.credentials())
    assert "client.id=mine" in layout.client_properties.read_text()
    assert mode(layout.librdkafka_properties) == 0o600


# -- server.properties -----------------------------------------------------------------------------


def node_props(spec: cluster.ClusterFile, node_id: int) -> dict[str, str]:
    return parse_properties(cluster.node_properties(spec, spec.node(node_id)))


def test_every_listener_is_sasl_ssl_and_the_server_accepts_the_config(tmp_path: Path) -> None:
    spec = secure_cluster(tmp_path, controllers=1, brokers=2)
    credentials = spec.credentials()
    controller = parse_server_config(node_props(spec, 1))
    broker = parse_server_config(node_props(spec, 2))
    assert node_props(spec, 2)["listeners"] == "SASL_SSL://127.0.0.1:9094"
    assert {n: s.protocol for n, s in controller.listener_security.items()} == {"CONTROLLER": "SASL_SSL"}
    assert {n: s.protocol for n, s in broker.listener_security.items()} == {"SASL_SSL": "SASL_SSL"}
    # Clients log in with SCRAM-SHA-512 only on the brokers; the controllers take the nodes' PLAIN too.
    assert broker.listener_security["SASL_SSL"].enabled_mechanisms == ("SCRAM-SHA-512",)
    ctl = controller.listener_security["CONTROLLER"]
    assert ctl.enabled_mechanisms == ("PLAIN", "SCRAM-SHA-512")
    assert ctl.plain_users is not None
    assert dict(ctl.plain_users.users) == {"kraft-node": credentials.node_password}
    # The node's own logins: PLAIN to the controllers, SCRAM-SHA-512 between brokers.
    out = broker.outbound_security
    assert (out["CONTROLLER"].mechanism, out["CONTROLLER"].username) == ("PLAIN", "kraft-node")
    assert (out["SASL_SSL"].mechanism, out["SASL_SSL"].password) == (
        "SCRAM-SHA-512",
        credentials.node_password,
    )
    assert broker.inter_broker_listener == "SASL_SSL"
    assert (
        out["SASL_SSL"].tls is not None and out["SASL_SSL"].tls.endpoint_identification_algorithm == "https"
    )
    props = node_props(spec, 2)
    assert props["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert props["super.users"] == "User:admin;User:kraft-node"
    # The PEM files load and the key matches its certificate (KraftServer's start-up checks).
    for config in (controller, broker):
        for security in config.listener_security.values():
            assert build_listener_auth(security).ssl_context is not None
        for outbound in config.outbound_security.values():
            built = build_client_security(outbound)
            assert built is not None and built.ssl_context is not None


def test_overrides_still_come_last_and_win(tmp_path: Path) -> None:
    spec = secure_cluster(tmp_path)
    spec.overrides = {"super.users": "User:admin"}
    assert node_props(spec, 2)["super.users"] == "User:admin"


def test_a_secure_controller_is_formatted_with_both_scram_users_and_no_password(tmp_path: Path) -> None:
    spec = secure_cluster(tmp_path)
    node = spec.node(1)
    Path(node.node_dir).mkdir(parents=True, exist_ok=True)
    cluster_security.write_private(node.config_path, cluster.node_properties(spec, node))
    cluster.format_node(spec, node)
    bootstrap = read_bootstrap_checkpoint(node.log_dir)
    assert bootstrap is not None
    assert [(r.data.name, r.data.mechanism) for r in bootstrap.scram_records] == [
        ("admin", 2),
        ("kraft-node", 2),
    ]
    credentials = spec.credentials()
    raw = Path(node.log_dir, "bootstrap.checkpoint").read_bytes()
    assert credentials.admin_password.encode() not in raw
    for argument in cluster_security.scram_format_arguments(credentials)[1::2]:
        assert parse_scram_argument(argument).mechanism.mechanism_name == "SCRAM-SHA-512"


# -- misuse and hints ------------------------------------------------------------------------------


def test_secure_up_on_a_plaintext_directory_and_the_reverse_change_nothing(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    spec = cluster.plan_new_cluster(plain, 1, 9093, {}, CLUSTER_ID)
    plain.mkdir()
    spec.save(plain / cluster.CLUSTER_FILE)
    before = (plain / cluster.CLUSTER_FILE).read_bytes()
    code, _, err = run(["up", "--secure", "--data-dir", str(plain)])
    assert code == 1 and "describes a PLAINTEXT cluster" in err and "--secure conflicts" in err
    assert sorted(p.name for p in plain.iterdir()) == [cluster.CLUSTER_FILE]
    assert (plain / cluster.CLUSTER_FILE).read_bytes() == before

    secure = tmp_path / "secure"
    spec = secure_cluster(secure)
    spec.save(secure / cluster.CLUSTER_FILE)
    before = (secure / cluster.CLUSTER_FILE).read_bytes()
    assert cluster.ClusterFile.load(secure / cluster.CLUSTER_FILE).secure
    code, _, err = run(["up", "--data-dir", str(secure)])
    assert code == 1 and "describes a secure cluster" in err
    assert f"kraft cluster up --secure --data-dir {secure}" in err
    assert (secure / cluster.CLUSTER_FILE).read_bytes() == before
    assert not any(Path(n.node_dir, "server.properties").exists() for n in spec.nodes)


def test_the_hints_name_the_client_files_and_never_a_password(tmp_path: Path) -> None:
    spec = secure_cluster(tmp_path)
    credentials = spec.credentials()
    layout = spec.layout
    text = cluster.secure_usage_text(spec) + "\n" + cluster.data_tools_hint(spec, "demo")
    assert credentials.admin_password not in text and credentials.node_password not in text
    assert f"--command-config {layout.client_properties}" in text
    assert f"kcat -b 127.0.0.1:9094 -F {layout.librdkafka_properties} -t demo -P" in text
    assert "-X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512" in text
    assert f"-X ssl.ca.location={layout.ca_certificate}" in text


def test_cluster_commands_log_in_with_the_admins_client_properties(tmp_path: Path) -> None:
    spec = secure_cluster(tmp_path)
    security = spec.admin_security()
    assert security is not None and (security.username, security.mechanism) == ("admin", "SCRAM-SHA-512")
    assert cluster.plan_new_cluster(tmp_path / "p", 1, 9093, {}, CLUSTER_ID).admin_security() is None
    spec.layout.client_properties.unlink()
    again = cluster.ClusterFile.load(_saved(spec, tmp_path))
    with pytest.raises(cluster.ClusterError, match=r"client\.properties"):
        again.admin_security()


def _saved(spec: cluster.ClusterFile, root: Path) -> Path:
    spec.save(root / cluster.CLUSTER_FILE)
    return root / cluster.CLUSTER_FILE


def test_start_node_of_a_secure_cluster_writes_a_private_config_and_issues_a_missing_keystore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = secure_cluster(tmp_path, base_port=0)  # start-node checks that the ports are free
    spec.save(tmp_path / cluster.CLUSTER_FILE)
    broker = spec.node(2)
    cluster.cluster_security.SecureLayout.keystore(broker.node_dir).unlink()  # as for a node added later
    started: list[subprocess.Popen[bytes]] = []

    def stand_in(config: Path, log: Path, lock: Path | None = None) -> subprocess.Popen[bytes]:
        started.append(
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(30)", "server-start", str(config)]
            )
        )
        return started[-1]

    monkeypatch.setattr(cluster.processes, "start_server", stand_in)
    try:
        code, out, err = run(["start-node", "--id", "2", "--data-dir", str(tmp_path)])
        assert code == 0, err
        assert f"Started node 2 as pid {started[0].pid}" in out
    finally:
        for p in started:
            p.kill()
            p.wait()
    assert mode(broker.config_path) == 0o600
    props = parse_properties(broker.config_path.read_text())
    assert props["listeners"] == f"SASL_SSL://127.0.0.1:{broker.broker_port}"
    keystore = cluster.cluster_security.SecureLayout.keystore(broker.node_dir)
    assert mode(keystore) == 0o600 and props["ssl.keystore.location"] == str(keystore)
    cert = x509.load_pem_x509_certificate(keystore.read_bytes())
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(spec.layout.ca_certificate.read_bytes()))
    assert Path(broker.data_dir, "meta.properties").exists()  # formatted on its first start
