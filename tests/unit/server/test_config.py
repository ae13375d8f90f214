"""Server configuration: valid files parse; every error names the property to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kraft.common.config import parse_properties
from kraft.common.errors import ConfigError
from kraft.raft.types import Endpoint
from kraft.server.config import load_server_config, parse_server_config
from kraft.server.kraft_server import read_meta_properties

BASE = {
    "process.roles": "controller",
    "node.id": "1",
    "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094,3@[::1]:9095",
    "listeners": "CONTROLLER://127.0.0.1:9093",
    "controller.listener.names": "CONTROLLER",
    "log.dirs": "/tmp/a,/tmp/b",
}


def config(**changes: str | None) -> dict[str, str]:
    props = dict(BASE)
    for key, value in changes.items():
        name = key.replace("__", ".")
        if value is None:
            props.pop(name, None)
        else:
            props[name] = value
    return props


def test_a_valid_file_parses_with_kafka_defaults(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text("# comment\n" + "\n".join(f"{k}={v}" for k, v in BASE.items()) + "\nunknown.key = kept\n")
    cfg = load_server_config(path, {"controller.quorum.fetch.timeout.ms": "3000"})
    assert cfg.node_id == 1
    assert cfg.voters[3] == Endpoint("CONTROLLER", "::1", 9095)
    assert cfg.raft_listener == Endpoint("CONTROLLER", "127.0.0.1", 9093)
    assert str(cfg.metadata_log_dir) == "/tmp/a"
    assert cfg.quorum.fetch_timeout_ms == 3000 and cfg.quorum.election_timeout_ms == 1000
    assert cfg.quorum.pre_vote_enabled and cfg.metrics_port == 0
    assert cfg.socket_request_max_bytes == 104_857_600 and cfg.connections_max_idle_ms == 600_000
    assert cfg.raft_driver == "loop"
    assert (cfg.log_index_interval_bytes, cfg.log_index_size_max_bytes) == (4096, 10 * 1024 * 1024)
    assert cfg.failed_authentication_delay_ms == 100 and cfg.ssl_keystore_reload_interval_ms == 60_000
    assert cfg.log_max_open_segment_files == -1  # derived from the open-file limit at start


def test_log_index_properties_reach_the_config() -> None:
    cfg = parse_server_config(config(log__index__interval__bytes="0", log__index__size__max__bytes="4096"))
    assert (cfg.log_index_interval_bytes, cfg.log_index_size_max_bytes) == (0, 4096)


def test_log_max_open_segment_files_reaches_the_config() -> None:
    cfg = parse_server_config(config(log__max__open__segment__files="5000"))
    assert cfg.log_max_open_segment_files == 5000


def test_raft_driver_chooses_where_the_core_runs() -> None:
    assert parse_server_config(config(raft__driver="thread")).raft_driver == "thread"
    assert parse_server_config(config(raft__driver=" Loop ")).raft_driver == "loop"


def test_metadata_log_dir_wins_over_log_dirs() -> None:
    assert str(parse_server_config(config(metadata__log__dir="/m")).metadata_log_dir) == "/m"


@pytest.mark.parametrize(
    ("changes", "property_name"),
    [
        ({"process__roles": None}, "process.roles"),
        ({"process__roles": "controller,controller"}, "process.roles"),
        ({"process__roles": "zookeeper"}, "process.roles"),
        ({"node__id": None}, "node.id"),
        ({"node__id": "x"}, "node.id"),
        ({"node__id": "-1"}, "node.id"),
        ({"node__id": "7"}, "controller.quorum.voters"),
        ({"controller__quorum__voters": "1@host"}, "controller.quorum.voters"),
        ({"controller__quorum__voters": "1@h:1,1@h:2"}, "controller.quorum.voters"),
        ({"controller__quorum__voters": "1@h:70000"}, "controller.quorum.voters"),
        ({"controller__quorum__voters": None}, "controller.quorum.voters"),
        (
            {"controller__quorum__bootstrap__servers": "nohost", "controller__quorum__voters": None},
            "controller.quorum.bootstrap.servers",
        ),
        ({"listeners": None}, "listeners"),
        ({"listeners": "CONTROLLER:9093"}, "listeners"),
        ({"listeners": "CONTROLLER://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"}, "listeners"),
        ({"controller__listener__names": None}, "controller.listener.names"),
        ({"controller__listener__names": "OTHER,CONTROLLER"}, "controller.listener.names"),
        ({"log__dirs": None}, "metadata.log.dir"),
        ({"controller__quorum__election__timeout__ms": "soon"}, "controller.quorum.election.timeout.ms"),
        ({"controller__quorum__fetch__timeout__ms": "0"}, "controller.quorum.fetch.timeout.ms"),
        ({"controller__quorum__request__timeout__ms": "-5"}, "controller.quorum.request.timeout.ms"),
        ({"controller__quorum__pre__vote__enable": "yes"}, "controller.quorum.pre.vote.enable"),
        ({"metrics__port": "99999"}, "metrics.port"),
        ({"raft__driver": "fiber"}, "raft.driver"),
        ({"socket__request__max__bytes": "0"}, "socket.request.max.bytes"),
        ({"metadata__log__segment__bytes": "10"}, "metadata.log.segment.bytes"),
        ({"log__index__interval__bytes": "-1"}, "log.index.interval.bytes"),
        ({"log__index__size__max__bytes": "3"}, "log.index.size.max.bytes"),
        ({"log__max__open__segment__files": "0"}, "log.max.open.segment.files"),
        ({"log__max__open__segment__files": "-2"}, "log.max.open.segment.files"),
        ({"ssl__keystore__reload__interval__ms": "-1"}, "ssl.keystore.reload.interval.ms"),
        (
            {"connection__failed__authentication__delay__ms": "-1"},
            "connection.failed.authentication.delay.ms",
        ),
        (
            {"connection__failed__authentication__delay__ms": "500", "connections__max__idle__ms": "500"},
            "connection.failed.authentication.delay.ms",
        ),
    ],
)
def test_each_error_names_the_property(changes: dict[str, str | None], property_name: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_server_config(config(**changes))
    assert str(info.value).startswith(property_name), str(info.value)


BROKER = {
    "process.roles": "broker",
    "node.id": "101",
    "controller.quorum.voters": "1@127.0.0.1:9093",
    "listeners": "PLAINTEXT://127.0.0.1:9092",
    "advertised.listeners": "PLAINTEXT://broker-1.example:19092",
    "controller.listener.names": "CONTROLLER",
    "log.dirs": "/data/a,/data/b",
    "broker.rack": "rack-a",
}


def test_a_broker_config_parses() -> None:
    cfg = parse_server_config(BROKER)
    assert cfg.is_broker and not cfg.is_controller and cfg.node_id == 101
    assert cfg.broker_listeners == (Endpoint("PLAINTEXT", "127.0.0.1", 9092),)
    assert cfg.advertised_listeners == (Endpoint("PLAINTEXT", "broker-1.example", 19092),)
    assert cfg.controller_listeners == () and cfg.raft_listener_name == "CONTROLLER"
    assert cfg.rack == "rack-a" and [str(d) for d in cfg.log_dirs] == ["/data/a", "/data/b"]
    assert str(cfg.metadata_log_dir) == "/data/a" and cfg.security_protocols == {"PLAINTEXT": 0}
    assert cfg.controlled_shutdown_enable and cfg.registration_timeout_ms == 60_000
    assert cfg.max_request_partition_size_limit == 2000 and cfg.broker_request_timeout_ms == 30_000
    assert cfg.max_request_partition_size_limit == 2000 and cfg.broker_request_timeout_ms == 30_000


def test_a_combined_node_binds_both_kinds_of_listener() -> None:
    cfg = parse_server_config(
        config(process__roles="broker,controller", listeners="CONTROLLER://127.0.0.1:9093,PLAINTEXT://:9092")
    )
    assert cfg.is_broker and cfg.is_controller
    assert [e.name for e in cfg.controller_listeners] == ["CONTROLLER"]
    assert cfg.advertised_listeners == (Endpoint("PLAINTEXT", "", 9092),)


@pytest.mark.parametrize(
    ("changes", "property_name"),
    [
        ({"node.id": "1"}, "controller.quorum.voters"),  # a broker-only node is never a voter
        ({"listeners": "CONTROLLER://127.0.0.1:9093"}, "listeners"),
        ({"listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"}, "listeners"),
        ({"advertised.listeners": "OTHER://h:1"}, "advertised.listeners"),
        ({"advertised.listeners": "PLAINTEXT://h:0"}, "advertised.listeners"),
        ({"listener.security.protocol.map": "PLAINTEXT:SASL_PLAINTEXT"}, "sasl.enabled.mechanisms"),
        ({"listener.security.protocol.map": "CONTROLLER:PLAINTEXT"}, "listener.security.protocol.map"),
        ({"listener.security.protocol.map": "PLAINTEXT"}, "listener.security.protocol.map"),
        ({"log.dirs": None, "metadata.log.dir": "/m"}, "log.dirs"),
        ({"controller.listener.names": None}, "controller.listener.names"),
        ({"initial.broker.registration.timeout.ms": "0"}, "initial.broker.registration.timeout.ms"),
        ({"controlled.shutdown.enable": "maybe"}, "controlled.shutdown.enable"),
        ({"max.request.partition.size.limit": "0"}, "max.request.partition.size.limit"),
        ({"max.request.partition.size.limit": "0"}, "max.request.partition.size.limit"),
        ({"process.roles": "broker,controller", "listeners": "CONTROLLER://h:1"}, "listeners"),
    ],
)
def test_each_broker_config_error_names_the_property(
    changes: dict[str, str | None], property_name: str
) -> None:
    props = dict(BROKER)
    for key, value in changes.items():
        if value is None:
            props.pop(key, None)
        else:
            props[key] = value
    with pytest.raises(ConfigError) as info:
        parse_server_config(props)
    assert str(info.value).startswith(property_name), str(info.value)


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_server_config(tmp_path / "nope.properties")


def test_unformatted_log_dir_tells_the_user_to_run_storage_format(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="kraft storage format") as info:
        read_meta_properties(tmp_path, 1)
    assert str(info.value).startswith("metadata.log.dir")


def test_node_id_mismatch_with_meta_properties_is_refused(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("version=1\ncluster.id=abc\nnode.id=2\n")
    with pytest.raises(ConfigError, match=r"node\.id") as info:
        read_meta_properties(tmp_path, 1)
    assert "2" in str(info.value) and "1" in str(info.value)
    assert read_meta_properties(tmp_path, 2).cluster_id == "abc"


def test_properties_parser_follows_java_rules() -> None:
    text = (
        "a=1\nb : 2\nc 3\n! bang comment\n  # indented comment\n"
        "d=long \\\n   value\ne=\\u0041\\tx\nf=\na=override\n"
    )
    assert parse_properties(text) == {
        "a": "override",
        "b": "2",
        "c": "3",
        "d": "long value",
        "e": "A\tx",
        "f": "",
    }
