"""``kraft storage format`` with Kafka 4.x's KIP-853 flags: --standalone, --initial-controllers,
--no-initial-controllers. Every misuse fails with a clear message and writes nothing."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest

from kraft.cli.storage import main, parse_initial_controllers
from kraft.common.errors import ConfigError
from kraft.common.uuids import uuid_from_base64, uuid_to_base64
from kraft.raft.types import Endpoint, ReplicaKey
from kraft.raft.voters import KRAFT_VERSION_1
from kraft.storage.meta_properties import read_meta_properties
from kraft.storage.snapshots import bootstrap_voters_path, read_bootstrap_voters

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
DIR_1 = "JEXY6aqzQY-32P5TStzaFg"
DIR_2 = "MvDxzVmcRsaTz33bUuRU6A"
DIR_3 = "07R5amHmR32VDA6jHkGbTA"
INITIAL = f"1@h1:9093:{DIR_1},2@h2:9094:{DIR_2},3@[::1]:9095:{DIR_3}"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def write_config(tmp_path: Path, **extra: str | None) -> Path:
    props: dict[str, str | None] = {
        "process.roles": "controller",
        "node.id": "1",
        "listeners": "CONTROLLER://127.0.0.1:9093",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
        "log.dirs": str(tmp_path / "a"),
        "metadata.log.dir": str(tmp_path / "meta"),
    }
    for key, value in extra.items():
        props[key.replace("__", ".")] = value
    path = tmp_path / "server.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items() if v is not None))
    return path


def format_(tmp_path: Path, *flags: str, **extra: str | None) -> tuple[int, str, str]:
    return run("format", "-c", str(write_config(tmp_path, **extra)), "-t", CLUSTER, *flags)


def written(tmp_path: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.name != "server.properties")


def test_standalone_makes_this_controller_the_only_voter(tmp_path: Path) -> None:
    code, out, err = format_(tmp_path, "--standalone")
    assert (code, err) == (0, "")
    assert f"Formatting dynamic metadata voter directory {tmp_path / 'meta'} with metadata.version" in out
    assert f"Formatting data directory {tmp_path / 'a'}" in out
    meta = read_meta_properties(tmp_path / "meta")
    assert meta is not None and meta.directory_id is not None
    checkpoint = read_bootstrap_voters(tmp_path / "meta")
    assert checkpoint is not None and checkpoint.kraft_version == KRAFT_VERSION_1
    assert checkpoint.voters is not None
    (voter,) = list(checkpoint.voters)
    assert voter.key == ReplicaKey(1, meta.directory_id)
    assert voter.endpoints == (Endpoint("CONTROLLER", "127.0.0.1", 9093),)
    # Only the metadata directory holds the voters; data directories get their own ids.
    assert read_bootstrap_voters(tmp_path / "a") is None
    other = read_meta_properties(tmp_path / "a")
    assert other is not None and other.directory_id not in (None, meta.directory_id)


def test_standalone_uses_the_advertised_controller_endpoint(tmp_path: Path) -> None:
    code, _, err = format_(
        tmp_path,
        "-s",
        listeners="CONTROLLER://0.0.0.0:9093",
        advertised__listeners="CONTROLLER://ctl1.example:19093",
    )
    assert code == 0, err
    checkpoint = read_bootstrap_voters(tmp_path / "meta")
    assert checkpoint is not None and checkpoint.voters is not None
    assert [v.endpoints for v in checkpoint.voters] == [(Endpoint("CONTROLLER", "ctl1.example", 19093),)]


def test_initial_controllers_take_this_nodes_directory_id_from_its_entry(tmp_path: Path) -> None:
    code, out, err = format_(tmp_path, "--initial-controllers", INITIAL, node__id="2")
    assert (code, err) == (0, "")
    assert "dynamic metadata voter directory" in out
    meta = read_meta_properties(tmp_path / "meta")
    assert meta is not None and meta.directory_id == uuid_from_base64(DIR_2)
    checkpoint = read_bootstrap_voters(tmp_path / "meta")
    assert checkpoint is not None and checkpoint.voters is not None
    assert [(v.key.id, uuid_to_base64(v.key.directory_id), v.endpoints) for v in checkpoint.voters] == [
        (1, DIR_1, (Endpoint("CONTROLLER", "h1", 9093),)),
        (2, DIR_2, (Endpoint("CONTROLLER", "h2", 9094),)),
        (3, DIR_3, (Endpoint("CONTROLLER", "::1", 9095),)),
    ]
    code, out, _ = run("info", "-c", str(tmp_path / "server.properties"))
    assert code == 0 and f"Found initial controllers: {INITIAL}" in out


def test_no_initial_controllers_writes_no_voters(tmp_path: Path) -> None:
    code, out, err = format_(tmp_path, "-N")
    assert (code, err) == (0, "")
    assert f"Formatting metadata directory {tmp_path / 'meta'}" in out
    assert read_meta_properties(tmp_path / "meta") is not None
    assert not bootstrap_voters_path(tmp_path / "meta").exists()
    assert not (tmp_path / "meta" / "__cluster_metadata-0").exists()


def test_no_initial_controllers_is_accepted_on_a_broker(tmp_path: Path) -> None:
    code, _, err = format_(
        tmp_path,
        "-N",
        process__roles="broker",
        listeners="PLAINTEXT://127.0.0.1:9092",
    )
    assert code == 0, err
    assert not bootstrap_voters_path(tmp_path / "meta").exists()


def test_ignore_formatted_does_not_rewrite_the_voters(tmp_path: Path) -> None:
    assert format_(tmp_path, "-s")[0] == 0
    before = bootstrap_voters_path(tmp_path / "meta").read_bytes()
    code, out, _ = format_(tmp_path, "-s", "-g")
    assert code == 0 and "All of the log directories are already formatted." in out
    assert bootstrap_voters_path(tmp_path / "meta").read_bytes() == before


@pytest.mark.parametrize(
    ("flags", "extra", "message"),
    [
        (
            ["-s"],
            {"process.roles": "broker", "listeners": "PLAINTEXT://127.0.0.1:9092"},
            "You can only use --standalone on a controller.",
        ),
        (
            ["-I", INITIAL],
            {"process.roles": "broker", "listeners": "PLAINTEXT://127.0.0.1:9092"},
            "You can only use --initial-controllers on a controller.",
        ),
        (
            ["-s"],
            {"controller.quorum.voters": "1@127.0.0.1:9093"},
            "You cannot specify controller.quorum.voters and format the node with --standalone. If you "
            "want to use dynamic quorum, please remove controller.quorum.voters and specify "
            "controller.quorum.bootstrap.servers instead.",
        ),
        (
            ["-I", INITIAL],
            {"controller.quorum.voters": "1@127.0.0.1:9093"},
            "You cannot specify controller.quorum.voters and format the node with --initial-controllers.",
        ),
        (
            ["-N"],
            {"controller.quorum.voters": "1@127.0.0.1:9093"},
            "You cannot specify controller.quorum.voters and format the node with --no-initial-controllers.",
        ),
        (
            [],
            {},
            "Because controller.quorum.voters is not set on this controller, you must specify one of the "
            "following: --standalone, --initial-controllers, or --no-initial-controllers.",
        ),
        (
            ["-s"],
            {"controller.quorum.bootstrap.servers": None},
            "controller.quorum.bootstrap.servers is required with --standalone",
        ),
        (
            ["-I", f"2@h2:9094:{DIR_2},3@h3:9095:{DIR_3}"],
            {},
            "--initial-controllers: node.id 1 is not one of the initial controllers (2, 3)",
        ),
        (["-s"], {"listeners": "CONTROLLER://127.0.0.1:0"}, "needs a fixed port (not 0)"),
        (
            ["-s", "-f", "kraft.version=0"],
            {},
            "Cannot set kraft.version to 0 if one of the flags --standalone, --initial-controllers, or "
            "--no-initial-controllers is used.",
        ),
        (["-I", f"1@h1:9093:{DIR_1},1@h2:9094:{DIR_2}"], {}, "node id 1 was specified more than once"),
        (
            ["-I", f"1@h1:9093:{DIR_1},2@h2:9094:{DIR_1}"],
            {},
            f"directory id {DIR_1} was specified more than once",
        ),
        (["-I", f"1h1:9093:{DIR_1}"], {}, "no '@' found"),
        (["-I", f"x@h1:9093:{DIR_1}"], {}, "the node id 'x' is not a number"),
        (["-I", f"1@h1:99999:{DIR_1}"], {}, "the port 99999 is out of range"),
        (["-I", "1@h1:9093:not-a-uuid"], {}, "the directory id is not a base64 UUID"),
        (["-I", f"1@[::1:9093:{DIR_1}"], {}, "has no ']'"),
        (["-I", "1@h1:9093"], {}, "no ':' after the port"),
        (["-I", ","], {}, "--initial-controllers: no voters given"),
    ],
)
def test_misuse_is_refused_and_writes_nothing(
    tmp_path: Path, flags: list[str], extra: dict[str, str | None], message: str
) -> None:
    code, out, err = format_(tmp_path, *flags, **{k.replace(".", "__"): v for k, v in extra.items()})
    assert code == 1 and out == "", (out, err)
    assert err.startswith("kraft storage format: ") and message in err, err
    assert written(tmp_path) == []


def test_the_three_flags_are_mutually_exclusive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(write_config(tmp_path))
    for pair in (["-s", "-N"], ["-s", "-I", INITIAL], ["-N", "-I", INITIAL]):
        with pytest.raises(SystemExit) as exc:
            main(["format", "-c", config, "-t", CLUSTER, *pair])
        assert exc.value.code == 2
        assert "not allowed with argument" in capsys.readouterr().err
    assert written(tmp_path) == []


def test_a_leftover_metadata_log_with_voters_is_refused(tmp_path: Path) -> None:
    assert format_(tmp_path, "-s")[0] == 0
    (tmp_path / "meta" / "meta.properties").unlink()
    (tmp_path / "a" / "meta.properties").unlink()
    code, _, err = format_(tmp_path, "-s")
    assert code == 1 and "already exists" in err
    assert read_meta_properties(tmp_path / "a") is None


def test_parse_initial_controllers_reads_kafkas_syntax() -> None:
    voters = parse_initial_controllers(f" 0@example.com:8082:{DIR_1} ,1@[fe80::1]:8083:{DIR_2}", "C")
    assert [(v.key.id, v.endpoints) for v in voters] == [
        (0, (Endpoint("C", "example.com", 8082),)),
        (1, (Endpoint("C", "fe80::1", 8083),)),
    ]
    with pytest.raises(ConfigError, match="zero UUID"):
        parse_initial_controllers(f"0@h:1:{uuid_to_base64(uuid.UUID(int=0))}", "C")


def test_format_help_lists_the_dynamic_quorum_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["format", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--standalone, -s", "--no-initial-controllers, -N", "--initial-controllers"):
        assert flag in text
    assert "id@hostname:port:directory" in text
