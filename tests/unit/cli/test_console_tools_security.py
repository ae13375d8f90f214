"""The console tools over a secured listener: ``--command-config`` (KIP-1147) and the older
``--producer.config``/``--consumer.config`` carry Kafka's security properties to kraft's producer,
consumer and get-offsets, against in-process brokers serving SASL_SSL with PLAIN (``data_brokers``)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from data_brokers import PRODUCE, DataCluster
from tls_certs import session_pki

from kraft.cli import console_consumer, console_producer, get_offsets
from kraft.common.principal import KafkaPrincipal
from kraft.net.server import ListenerAuth
from kraft.net.tls import TlsSettings, server_context
from kraft.security.plain import PlainServer
from kraft.security.sasl import PLAIN, mechanism_factory

pytestmark = pytest.mark.timeout(60)

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="{}";'


@pytest.fixture(scope="module")
def cluster() -> Iterator[DataCluster]:
    tls = server_context(TlsSettings(keystore_location=session_pki().path("server.pem")))
    factory = mechanism_factory([PLAIN], {PLAIN: lambda: PlainServer({"alice": "alice-secret"})})
    auth = ListenerAuth(ssl_context=tls, sasl=True, enabled_mechanisms=(PLAIN,), sasl_factory=factory)
    with DataCluster(brokers=2, auth=auth) as c:
        c.create_topic("t", 1)
        yield c


def client_properties(directory: Path, password: str = "alice-secret") -> str:
    path = directory / "client.properties"
    path.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=PLAIN\n"
        f"sasl.jaas.config={JAAS.format(password)}\n"
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={session_pki().path('ca.pem')}\n"
    )
    return str(path)


def produce(cluster: DataCluster, lines: str, *argv: str) -> tuple[int, str]:
    err = io.StringIO()
    code = console_producer.main(
        ["--bootstrap-server", cluster.bootstrap(1), "--topic", "t", "--max-block-ms", "3000", *argv],
        io.StringIO(),
        err=err,
        stdin=io.StringIO(lines),
    )
    return code, err.getvalue()


def consume(cluster: DataCluster, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = ["--bootstrap-server", cluster.bootstrap(2), "--topic", "t", "--from-beginning"]
    code = console_consumer.main([*args, "--timeout-ms", "1000", *argv], out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_producer_consumer_and_get_offsets_log_in_with_the_command_config(
    cluster: DataCluster, tmp_path: Path
) -> None:
    config = client_properties(tmp_path)
    before = len(cluster.log("t", 0).values())
    code, err = produce(cluster, "one\ntwo\n", "--command-config", config)
    assert code == 0 and err == ""
    assert cluster.log("t", 0).values()[before:] == [b"one", b"two"]
    produced = cluster.broker(1).requests(PRODUCE)[-1]
    assert produced.principal == KafkaPrincipal("User", "alice")  # logged in, not ANONYMOUS

    code, out, err = consume(cluster, "--command-config", config, "--max-messages", str(before + 2))
    assert code == 0, err
    assert out.splitlines()[-2:] == ["one", "two"]
    assert "WARN" not in err  # the security properties are known ones

    out_buf, err_buf = io.StringIO(), io.StringIO()
    args = ["--bootstrap-server", cluster.bootstrap(2), "--topic", "t", "--command-config", config]
    assert get_offsets.main(args, out_buf, err=err_buf) == 0, err_buf.getvalue()
    assert out_buf.getvalue() == f"t:0:{before + 2}\n"


def test_the_older_config_options_still_work_with_a_deprecation_warning(
    cluster: DataCluster, tmp_path: Path
) -> None:
    config = client_properties(tmp_path)
    code, err = produce(cluster, "three\n", "--producer.config", config)
    assert code == 0 and cluster.log("t", 0).values()[-1] == b"three"
    assert "Option --producer.config is deprecated" in err and "Use --command-config instead." in err
    code, out, err = consume(cluster, "--consumer.config", config)
    assert code == 0 and out.splitlines()[-1] == "three"
    assert "Option --consumer.config is deprecated" in err


def test_the_security_settings_may_come_as_producer_properties(cluster: DataCluster) -> None:
    ca = session_pki().path("ca.pem")
    props = [
        "security.protocol=SASL_SSL",
        "sasl.mechanism=PLAIN",
        f"sasl.jaas.config={JAAS.format('alice-secret')}",
        f"ssl.truststore.location={ca}",
    ]
    code, err = produce(cluster, "four\n", *[a for p in props for a in ("--producer-property", p)])
    assert code == 0, err
    assert cluster.log("t", 0).values()[-1] == b"four"


def test_both_config_options_or_a_bad_security_setting_are_misuse(tmp_path: Path) -> None:
    config = client_properties(tmp_path)
    code, err = produce_misuse("--command-config", config, "--producer.config", config)
    assert code == 2
    assert "Options --producer.config and --command-config cannot be specified together." in err
    bad = tmp_path / "bad.properties"
    bad.write_text(Path(config).read_text().replace(session_pki().path("ca.pem"), "/no/ca.pem"))
    for tool in (console_producer, console_consumer):
        out, err_buf = io.StringIO(), io.StringIO()
        args = ["--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--command-config", str(bad)]
        assert tool.main(args, out, err=err_buf) == 2
        assert "ssl.truststore.location: /no/ca.pem does not exist" in err_buf.getvalue()
    err_buf = io.StringIO()
    assert (
        get_offsets.main(["--bootstrap-server", "127.0.0.1:1", "--command-config", str(bad)], err=err_buf)
        == 2
    )
    assert "ssl.truststore.location" in err_buf.getvalue()


def produce_misuse(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    code = console_producer.main(
        ["--bootstrap-server", "127.0.0.1:1", "--topic", "t", *argv],
        io.StringIO(),
        err=err,
        stdin=io.StringIO(),
    )
    return code, err.getvalue()


def test_without_the_settings_or_with_a_wrong_password_nothing_is_written(
    cluster: DataCluster, tmp_path: Path
) -> None:
    before = cluster.log("t", 0).values()
    code, err = produce(cluster, "plain\n", "--max-block-ms", "1000")
    assert code == 1 and "ERROR Error when sending message" in err
    wrong = client_properties(tmp_path, password="guess")
    code, err = produce(cluster, "guess\n", "--max-block-ms", "1000", "--command-config", wrong)
    assert code == 1 and "refused the login of 'alice'" in err
    assert cluster.log("t", 0).values() == before
