"""kraft metadata-quorum add-controller / remove-controller (KIP-853): Kafka's output and errors,
and the admin client finding the leader and retrying while it says REQUEST_TIMED_OUT."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_metadata_quorum import ScriptedNode, cluster_response

from kraft.cli import metadata_quorum
from kraft.client.admin import AdminClient, ApiError
from kraft.client.connection import AdminError
from kraft.common.uuids import uuid_to_base64
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import add_raft_voter as add_raft_voter_msg
from kraft.protocol.messages import api_versions as api_versions_msg
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import remove_raft_voter as remove_raft_voter_msg
from kraft.raft.types import Endpoint
from kraft.storage.meta_properties import MetaProperties, write_meta_properties

DIR = uuid.UUID(int=0xABCDEF)
DIR_TEXT = uuid_to_base64(DIR)


class RecordingClient:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.error = error

    def add_raft_voter(self, voter_id: int, directory_id: uuid.UUID, endpoints: list[Endpoint]) -> None:
        self.calls.append(("add", voter_id, directory_id, list(endpoints)))
        if self.error is not None:
            raise self.error

    def remove_raft_voter(self, voter_id: int, directory_id: uuid.UUID) -> None:
        self.calls.append(("remove", voter_id, directory_id))
        if self.error is not None:
            raise self.error


def run_cli(argv: list[str], client: Any = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def factory(_ns: Any) -> Any:
        assert client is not None, "the command should have failed before connecting"
        return client

    code = metadata_quorum.main(argv, out=out, err=err, client_factory=factory)
    return code, out.getvalue(), err.getvalue()


def controller_config(tmp_path: Path, *, formatted: bool = True, **extra: str | None) -> Path:
    props: dict[str, str | None] = {
        "process.roles": "controller",
        "node.id": "4",
        "listeners": "CONTROLLER://127.0.0.1:9096",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
        "metadata.log.dir": str(tmp_path / "meta"),
    }
    for key, value in extra.items():
        props[key.replace("__", ".")] = value
    if formatted:
        (tmp_path / "meta").mkdir(exist_ok=True)
        write_meta_properties(tmp_path / "meta", MetaProperties(cluster_id="c", node_id=4, directory_id=DIR))
    path = tmp_path / "controller.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items() if v is not None))
    return path


def test_add_controller_sends_the_controllers_identity_and_prints_kafkas_line(tmp_path: Path) -> None:
    client = RecordingClient()
    config = controller_config(tmp_path)
    code, out, err = run_cli(
        ["--bootstrap-controller", "h:1", "add-controller", "--config", str(config)], client
    )
    assert (code, err) == (0, "")
    assert (
        out == f"Added controller 4 with directory id {DIR_TEXT} and endpoints: CONTROLLER://127.0.0.1:9096\n"
    )
    assert client.calls == [("add", 4, DIR, [Endpoint("CONTROLLER", "127.0.0.1", 9096)])]


def test_add_controller_takes_kafkas_command_config_and_advertised_listeners(tmp_path: Path) -> None:
    client = RecordingClient()
    config = controller_config(
        tmp_path,
        listeners="CONTROLLER://:9096,REPL://[::1]:9097",
        controller__listener__names="CONTROLLER,REPL",
        advertised__listeners="CONTROLLER://ctl4.example:19096",
    )
    code, out, _ = run_cli(
        ["--bootstrap-controller", "h:1", "--command-config", str(config), "add-controller"], client
    )
    assert code == 0
    assert out.endswith("endpoints: CONTROLLER://ctl4.example:19096, REPL://[::1]:9097\n")
    assert client.calls[0][3] == [
        Endpoint("CONTROLLER", "ctl4.example", 19096),
        Endpoint("REPL", "::1", 9097),
    ]


def test_add_controller_dry_run_sends_nothing(tmp_path: Path) -> None:
    config = controller_config(tmp_path)
    code, out, _ = run_cli(
        ["--bootstrap-controller", "h:1", "add-controller", "--config", str(config), "--dry-run"]
    )
    assert code == 0 and out.startswith("DRY RUN of adding controller 4 with directory id ")


@pytest.mark.parametrize(
    ("extra", "formatted", "message"),
    [
        ({"node.id": None}, True, "node.id not found in configuration file."),
        ({"node.id": "-1"}, True, "node.id was negative in configuration file."),
        (
            {"process.roles": "broker"},
            True,
            "process.roles did not contain 'controller' in configuration file.",
        ),
        ({"metadata.log.dir": None}, True, "Neither metadata.log.dir nor log.dirs were found."),
        ({}, False, "Unable to read meta.properties from"),
        ({"controller.listener.names": None}, True, "controller.listener.names was not found."),
        (
            {"controller.listener.names": "OTHER"},
            True,
            "Cannot find information about controller listener name: OTHER",
        ),
    ],
)
def test_add_controller_refuses_a_config_that_does_not_describe_a_formatted_controller(
    tmp_path: Path, extra: dict[str, str | None], formatted: bool, message: str
) -> None:
    config = controller_config(
        tmp_path, formatted=formatted, **{k.replace(".", "__"): v for k, v in extra.items()}
    )
    code, out, err = run_cli(["--bootstrap-controller", "h:1", "add-controller", "--config", str(config)])
    assert code == 1 and out == "" and message in err, err


def test_add_controller_needs_a_config_file(tmp_path: Path) -> None:
    code, _, err = run_cli(["--bootstrap-controller", "h:1", "add-controller"])
    assert code == 1
    assert "You must supply the configuration file of the controller you are adding" in err
    code, _, err = run_cli(
        ["--bootstrap-controller", "h:1", "add-controller", "--config", str(tmp_path / "x")]
    )
    assert code == 1 and f"Properties file {tmp_path / 'x'} does not exist." in err


def test_a_refusal_prints_the_error_name_and_message(tmp_path: Path) -> None:
    client = RecordingClient(
        ApiError("AddRaftVoter", ErrorCode.DUPLICATE_VOTER, "voter 4 is already a voter")
    )
    config = controller_config(tmp_path)
    code, out, err = run_cli(
        ["--bootstrap-controller", "h:1", "add-controller", "--config", str(config)], client
    )
    assert code == 1 and out == ""
    assert "AddRaftVoter failed: DUPLICATE_VOTER: voter 4 is already a voter" in err


def test_remove_controller_prints_kafkas_line() -> None:
    client = RecordingClient()
    code, out, err = run_cli(
        ["--bootstrap-controller", "h:1", "remove-controller", "--controller-id", "2", "-d", DIR_TEXT], client
    )
    assert (code, err) == (0, "")
    assert out == f"Removed  KRaft controller 2 with directory id {DIR_TEXT}\n"
    assert client.calls == [("remove", 2, DIR)]
    code, out, _ = run_cli(
        ["--bootstrap-controller", "h:1", "remove-controller", "-i", "2", "-d", DIR_TEXT, "--dry-run"]
    )
    assert code == 0 and out == f"DRY RUN of removing  KRaft controller 2 with directory id {DIR_TEXT}\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-i", "-3", "-d", DIR_TEXT], "Invalid negative --controller-id: -3"),
        (["-i", "3", "-d", "nope"], "Failed to parse --controller-directory-id: "),
    ],
)
def test_remove_controller_checks_its_arguments(args: list[str], message: str) -> None:
    code, _, err = run_cli(["--bootstrap-controller", "h:1", "remove-controller", *args])
    assert code == 1 and message in err


def test_remove_controller_requires_both_ids() -> None:
    assert run_cli(["--bootstrap-controller", "h:1", "remove-controller", "-i", "2"])[0] == 2


# -----------------------------------------------------------------------------------------------
# The admin client against scripted controllers


def _api_versions() -> Any:
    cls = api_versions_msg.RESPONSE.cls
    keys = [
        cls.ApiVersion(api_key=api.key, min_version=api.served.low, max_version=api.served.high)
        for api in (
            api_versions_msg.API,
            describe_cluster_msg.API,
            add_raft_voter_msg.API,
            remove_raft_voter_msg.API,
        )
    ]
    return api_versions_msg.RESPONSE(error_code=0, api_keys=keys)


@pytest.fixture
def nodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ScriptedNode]]:
    import test_metadata_quorum

    monkeypatch.setattr(test_metadata_quorum, "api_versions_response", _api_versions)
    created: list[ScriptedNode] = []
    yield created
    for n in created:
        n.close()


def test_add_raft_voter_follows_the_leader_and_retries_while_the_voter_catches_up(
    nodes: list[ScriptedNode],
) -> None:
    ports: dict[int, int] = {}
    seen: list[Any] = []
    answers = iter([ErrorCode.REQUEST_TIMED_OUT, ErrorCode.REQUEST_TIMED_OUT])

    def follower(key: int, _v: int, _body: Any) -> Any:
        if key == describe_cluster_msg.API.key:
            return cluster_response(controller_id=2, ports=ports)
        return add_raft_voter_msg.RESPONSE(error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER)

    def leader(key: int, _v: int, body: Any) -> Any:
        if key == describe_cluster_msg.API.key:
            return cluster_response(controller_id=2, ports=ports)
        seen.append(body)
        code = next(answers, 0)
        return add_raft_voter_msg.RESPONSE(error_code=code, error_message="not caught up" if code else None)

    nodes += [ScriptedNode(follower), ScriptedNode(leader)]
    ports.update({1: nodes[0].port, 2: nodes[1].port})
    client = AdminClient([nodes[0].address], timeout_ms=10_000, retry_backoff_ms=1, request_timeout_ms=3_000)
    client.add_raft_voter(4, DIR, [Endpoint("CONTROLLER", "127.0.0.1", 9096)])
    assert len(seen) == 3
    body = seen[-1]
    assert (body.cluster_id, body.voter_id, body.voter_directory_id) == (None, 4, DIR)
    assert [(x.name, x.host, x.port) for x in body.listeners] == [("CONTROLLER", "127.0.0.1", 9096)]
    assert 0 < body.timeout_ms < 3_000  # answered by the leader before our own request times out


def test_a_final_refusal_is_an_api_error_with_the_leaders_message(nodes: list[ScriptedNode]) -> None:
    def leader(key: int, _v: int, _body: Any) -> Any:
        return remove_raft_voter_msg.RESPONSE(
            error_code=ErrorCode.VOTER_NOT_FOUND, error_message="no voter 9"
        )

    nodes.append(ScriptedNode(leader))
    client = AdminClient([nodes[0].address], timeout_ms=5_000)
    with pytest.raises(ApiError) as excinfo:
        client.remove_raft_voter(9, DIR)
    assert excinfo.value.code == ErrorCode.VOTER_NOT_FOUND
    assert str(excinfo.value) == "RemoveRaftVoter failed: VOTER_NOT_FOUND: no voter 9"


def test_retriable_refusals_until_the_deadline_name_the_last_answer(nodes: list[ScriptedNode]) -> None:
    def leader(key: int, _v: int, _body: Any) -> Any:
        return add_raft_voter_msg.RESPONSE(error_code=ErrorCode.REQUEST_TIMED_OUT, error_message="lagging")

    nodes.append(ScriptedNode(leader))
    client = AdminClient([nodes[0].address], timeout_ms=1_000, retry_backoff_ms=10)
    with pytest.raises(AdminError) as excinfo:
        client.add_raft_voter(4, DIR, [Endpoint("CONTROLLER", "h", 1)])
    assert "timed out after 1000 ms waiting for AddRaftVoter" in str(excinfo.value)
    assert "REQUEST_TIMED_OUT: lagging" in str(excinfo.value)
