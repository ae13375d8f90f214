"""``kraft features``: argument rules and Kafka's messages, the describe/update text, and the admin
client against scripted loopback nodes answering canned ApiVersions/UpdateFeatures bodies in our
real codec (NOT_CONTROLLER followed to the active controller, v0-only servers, dead addresses)."""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kraft.cli import cluster_processes as processes
from kraft.cli import features
from kraft.cli.common import UsageError
from kraft.client.admin import AdminClient
from kraft.client.connection import Address, AdminError, FeatureMetadata
from kraft.net.server import FeatureInfo, api_versions_body
from kraft.protocol.api import decode_request, encode_response
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import REGISTRY
from kraft.protocol.messages import api_versions as api_versions_msg
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import describe_quorum as describe_quorum_msg
from kraft.protocol.messages import update_features as update_features_msg

ELR = "eligible.leader.replicas.version"
MV = "metadata.version"
NOT_CONTROLLER = 41
INVALID_UPDATE_VERSION = 95

SUPPORTED = {
    MV: (1, 25),
    ELR: (0, 1),
    "kraft.version": (0, 0),
    "group.version": (0, 1),
    "transaction.version": (0, 2),
}


# -----------------------------------------------------------------------------------------------
# Pure parts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("eligible.leader.replicas.version=1", (ELR, 1)),
        (" metadata.version = 25 ", (MV, 25)),
        ("x=-1", ("x", -1)),
        ("x=32767", ("x", 32767)),
    ],
)
def test_parses_name_and_level(text: str, expected: tuple[str, int]) -> None:
    assert features.parse_name_and_level(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "eligible.leader.replicas.version",
            "Can't parse feature=level string eligible.leader.replicas.version: equals sign not found.",
        ),
        ("x=one", "Can't parse feature=level string x=one: unable to parse one as a short."),
        ("x=32768", "Can't parse feature=level string x=32768: unable to parse 32768 as a short."),
        ("x=", "Can't parse feature=level string x=: unable to parse  as a short."),
        ("=1", "Can't parse feature=level string =1: the feature name is empty."),
    ],
)
def test_refuses_malformed_name_and_level(text: str, message: str) -> None:
    with pytest.raises(UsageError) as excinfo:
        features.parse_name_and_level(text)
    assert str(excinfo.value) == message


def test_level_to_string_uses_releases_for_metadata_version() -> None:
    assert features.level_to_string(MV, 25) == "4.0-IV3"
    assert features.level_to_string(MV, 1) == "3.0-IV1"
    assert features.level_to_string(MV, 0) == "UNKNOWN 0"
    assert features.level_to_string(MV, 99) == "UNKNOWN 99"
    assert features.level_to_string(ELR, 1) == "1"


def test_describe_text_matches_kafkas_layout() -> None:
    meta = FeatureMetadata(supported=dict(SUPPORTED), finalized={MV: 25, ELR: 1}, epoch=42)
    assert features.format_describe(meta).split("\n") == [
        f"Feature: {ELR}\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\t"
        "Epoch: 42",
        "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t"
        "Epoch: 42",
        "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 0\tFinalizedVersionLevel: 0\t"
        "Epoch: 42",
        "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 4.0-IV3\t"
        "FinalizedVersionLevel: 4.0-IV3\tEpoch: 42",
        "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\t"
        "FinalizedVersionLevel: 0\tEpoch: 42",
    ]
    unknown_epoch = FeatureMetadata(supported={ELR: (0, 1)}, finalized={}, epoch=None)
    assert features.format_describe(unknown_epoch).endswith("FinalizedVersionLevel: 0\tEpoch: -")


def test_update_lines_match_kafkas_wording() -> None:
    updates = {ELR: (1, 1), "group.version": (2, 1)}
    results: dict[str, tuple[int, str] | None] = {
        ELR: None,
        "group.version": (95, "Invalid update version 2."),
    }
    lines, failures = features.format_update_results("upgrade", updates, results, dry_run=False)
    assert (lines, failures) == (
        [f"{ELR} was upgraded to 1.", "Could not upgrade group.version to 2. Invalid update version 2."],
        1,
    )
    lines, _ = features.format_update_results("upgrade", updates, results, dry_run=True)
    assert lines == [
        f"{ELR} can be upgraded to 1.",
        "Can not upgrade group.version to 2. Invalid update version 2.",
    ]
    lines, _ = features.format_update_results("downgrade", {ELR: (0, 2)}, {ELR: None}, dry_run=False)
    assert lines == [f"{ELR} was downgraded to 0."]
    lines, _ = features.format_update_results("disable", {ELR: (0, 2)}, {ELR: None}, dry_run=True)
    assert lines == [f"{ELR} can be disabled."]
    lines, _ = features.format_update_results("disable", {ELR: (0, 2)}, {ELR: (95, "no.")}, dry_run=False)
    assert lines == [f"Could not disable {ELR}. no."]


# -----------------------------------------------------------------------------------------------
# The CLI with a fake client


class FakeClient:
    def __init__(self, results: dict[str, tuple[int, str] | None] | None = None) -> None:
        self.results = results
        self.sent: list[tuple[dict[str, tuple[int, int]], bool]] = []

    def describe_features(self) -> FeatureMetadata:
        return FeatureMetadata(supported={MV: (1, 25), ELR: (0, 1)}, finalized={MV: 25}, epoch=7)

    def update_features(
        self, updates: dict[str, tuple[int, int]], *, validate_only: bool = False
    ) -> dict[str, tuple[int, str] | None]:
        self.sent.append((dict(updates), validate_only))
        if self.results is not None:
            return self.results
        return dict.fromkeys(updates)


def run_cli(argv: list[str], client: Any = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def factory(_ns: Any) -> Any:
        if client is None:
            raise AssertionError("no client expected")
        return client

    code = features.main(argv, out=out, err=err, client_factory=factory)
    return code, out.getvalue(), err.getvalue()


BOOT = ["--bootstrap-controller", "127.0.0.1:9093"]


def test_describe_json() -> None:
    code, out, _ = run_cli([*BOOT, "describe", "--json"], FakeClient())
    assert code == 0
    assert json.loads(out) == {
        "finalizedFeaturesEpoch": 7,
        "features": [
            {"name": ELR, "supportedMinVersion": 0, "supportedMaxVersion": 1, "finalizedVersionLevel": 0},
            {"name": MV, "supportedMinVersion": 1, "supportedMaxVersion": 25, "finalizedVersionLevel": 25},
        ],
    }


def test_upgrade_downgrade_and_disable_send_kafkas_upgrade_types() -> None:
    client = FakeClient()
    assert run_cli([*BOOT, "upgrade", "--feature", f"{ELR}=1", "--dry-run"], client)[0] == 0
    assert run_cli([*BOOT, "downgrade", "--feature", f"{ELR}=0"], client)[0] == 0
    assert run_cli([*BOOT, "downgrade", "--feature", f"{ELR}=0", "--unsafe"], client)[0] == 0
    code, out, _ = run_cli([*BOOT, "disable", "--feature", ELR, "--feature", "group.version"], client)
    assert (code, out) == (0, f"{ELR} was disabled.\ngroup.version was disabled.\n")
    assert client.sent == [
        ({ELR: (1, 1)}, True),
        ({ELR: (0, 2)}, False),
        ({ELR: (0, 3)}, False),
        ({ELR: (0, 2), "group.version": (0, 2)}, False),
    ]


def test_release_version_sets_every_feature_to_its_release_default() -> None:
    client = FakeClient()
    code, out, _ = run_cli([*BOOT, "upgrade", "--release-version", "4.0"], client)
    # An upgrade leaves out features whose default is 0 (Kafka's rule).
    assert client.sent[-1] == ({ELR: (1, 1), MV: (25, 1)}, False)
    assert out == f"{ELR} was upgraded to 1.\nmetadata.version was upgraded to 25.\n"
    run_cli([*BOOT, "downgrade", "--release-version", "3.9-IV0"], client)
    sent = client.sent[-1][0]
    assert sent[MV] == (21, 2) and sent[ELR] == (0, 2) and sent["group.version"] == (0, 2)
    code, out, _ = run_cli([*BOOT, "upgrade", "--metadata", "4.0-IV2"], client)
    assert code == 0 and client.sent[-1] == ({MV: (24, 1)}, False)
    assert out.startswith(" `metadata` flag is deprecated and may be removed in a future release.\n")


def test_failed_updates_print_each_feature_and_exit_1() -> None:
    client = FakeClient({ELR: (INVALID_UPDATE_VERSION, "Invalid update version 2 for feature x.")})
    code, out, err = run_cli([*BOOT, "upgrade", "--feature", f"{ELR}=2"], client)
    assert code == 1
    assert out == f"Could not upgrade {ELR} to 2. Invalid update version 2 for feature x.\n"
    assert err == "1 out of 1 operation(s) failed.\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["upgrade"], "You must specify at least one feature to upgrade"),
        (["disable"], "You must specify at least one feature to disable"),
        (["upgrade", "--feature", "elr"], "Can't parse feature=level string elr: equals sign not found."),
        (
            ["upgrade", "--feature", f"{ELR}=1", "--feature", f"{ELR}=0"],
            f"Feature {ELR} was specified more than once.",
        ),
        (["disable", "--feature", ELR, "--feature", ELR], f"Feature {ELR} was specified more than once."),
        (
            ["upgrade", "--metadata", "4.0", "--feature", "metadata.version=25"],
            "Feature metadata.version was specified more than once.",
        ),
        (
            ["upgrade", "--release-version", "4.0", "--feature", f"{ELR}=1"],
            "Can not specify `release-version` with other feature flags.",
        ),
        (
            ["upgrade", "--release-version", "9.9"],
            "Unknown metadata.version 9.9. Supported metadata.version are 3.3-IV0, 3.3-IV1, ",
        ),
    ],
)
def test_bad_arguments_are_usage_errors_without_a_request(argv: list[str], message: str) -> None:
    code, _, err = run_cli([*BOOT, *argv])
    assert code == 2
    assert err.startswith(f"kraft features: {message}")
    assert "Traceback" not in err


def test_unknown_command_and_missing_bootstrap_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([*BOOT, "frobnicate"])[0] == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err
    assert run_cli(["describe"])[0] == 2
    assert "--bootstrap-controller" in capsys.readouterr().err
    assert run_cli([*BOOT])[0] == 2


def test_bad_bootstrap_address_is_reported_without_a_traceback() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = features.main(["--bootstrap-controller", "nohost", "describe"], out=out, err=err)
    assert code == 1 and "invalid bootstrap address 'nohost'" in err.getvalue()


def test_unreachable_controller_fails_clearly() -> None:
    (port,) = processes.free_ports(1)  # nothing listens there
    out, err = io.StringIO(), io.StringIO()
    argv = ["--bootstrap-controller", f"127.0.0.1:{port}", "--timeout-ms", "300", "describe"]
    assert features.main(argv, out=out, err=err) == 1
    expected = "kraft features: timed out after 300 ms waiting for the feature metadata"
    assert err.getvalue().startswith(expected)
    assert f"127.0.0.1:{port}: cannot connect" in err.getvalue()
    assert "Traceback" not in err.getvalue()


# -----------------------------------------------------------------------------------------------
# The admin client against scripted nodes (real sockets, real codec)

Handler = Callable[[int, int, Any], Any]


class ScriptedNode:
    """A loopback listener answering every request (ApiVersions included) with ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[tuple[int, int, Any]] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self.port: int = self._sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self._sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_conn, args=(conn,), daemon=True).start()

    def _serve_conn(self, conn: socket.socket) -> None:
        decoder = FrameDecoder()
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                for payload in decoder.feed(data):
                    header, body = decode_request(payload, REGISTRY)
                    self.requests.append((header.api_key, header.api_version, body))
                    response = self.handler(header.api_key, header.api_version, body)
                    api = REGISTRY[header.api_key]
                    encoded = encode_response(api, header.api_version, header.correlation_id, response)
                    conn.sendall(frame(encoded))


SERVED = [api_versions_msg.API, update_features_msg.API, describe_cluster_msg.API, describe_quorum_msg.API]
FEATURE_INFO = FeatureInfo(supported=SUPPORTED, finalized={MV: 25, ELR: 1, "group.version": 0}, epoch=123)


def api_versions(feature_info: FeatureInfo | None = FEATURE_INFO) -> Any:
    """The body our controller listener sends (``kraft.net.server.api_versions_body``)."""
    return api_versions_body(SERVED, features=feature_info)


def update_response(
    error: int = 0, message: str | None = None, results: dict[str, tuple[int, str | None]] | None = None
) -> Any:
    cls: Any = update_features_msg.RESPONSE.cls
    rows = [
        cls.UpdatableFeatureResult(feature=f, error_code=c, error_message=m)
        for f, (c, m) in (results or {}).items()
    ]
    return cls(throttle_time_ms=0, error_code=error, error_message=message, results=rows)


def cluster_response(controller_id: int, ports: dict[int, int]) -> Any:
    cls: Any = describe_cluster_msg.RESPONSE.cls
    return cls(
        error_code=0,
        endpoint_type=2,
        cluster_id="the-cluster",
        controller_id=controller_id,
        brokers=[
            cls.DescribeClusterBroker(broker_id=i, host="127.0.0.1", port=p) for i, p in sorted(ports.items())
        ],
    )


@pytest.fixture
def nodes() -> Iterator[list[ScriptedNode]]:
    created: list[ScriptedNode] = []
    yield created
    for n in created:
        n.close()


def test_describe_reads_apiversions_v3_features(nodes: list[ScriptedNode]) -> None:
    nodes.append(ScriptedNode(lambda key, v, body: api_versions()))
    out, err = io.StringIO(), io.StringIO()
    assert features.main(["--bootstrap-controller", nodes[0].bootstrap, "describe"], out=out, err=err) == 0
    lines = out.getvalue().splitlines()
    # Level-0 features are not finalized (spec 6.7): group.version shows 0, as Kafka's tool does.
    assert lines[0] == (
        f"Feature: {ELR}\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\t"
        "Epoch: 123"
    )
    assert lines[1] == (
        "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t"
        "Epoch: 123"
    )
    assert lines[3] == (
        "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 4.0-IV3\t"
        "FinalizedVersionLevel: 4.0-IV3\tEpoch: 123"
    )
    assert len(lines) == 5
    assert nodes[0].requests[0][:2] == (api_versions_msg.API.key, 3)


def test_describe_refuses_a_node_that_only_speaks_apiversions_v0(nodes: list[ScriptedNode]) -> None:
    def old(key: int, version: int, _body: Any) -> Any:
        if version >= 3:
            return api_versions_body(SERVED, error_code=35)  # UNSUPPORTED_VERSION
        return api_versions(None)

    nodes.append(ScriptedNode(old))
    client = AdminClient([Address("127.0.0.1", nodes[0].port)], timeout_ms=2_000)
    with pytest.raises(AdminError, match="does not report features"):
        client.describe_features()


def test_update_follows_not_controller_to_the_active_controller(nodes: list[ScriptedNode]) -> None:
    ports: dict[int, int] = {}

    def standby(key: int, _v: int, _body: Any) -> Any:
        if key == api_versions_msg.API.key:
            return api_versions()
        if key == describe_cluster_msg.API.key:
            return cluster_response(2, ports)
        return update_response(NOT_CONTROLLER)

    def active(key: int, _v: int, body: Any) -> Any:
        if key == api_versions_msg.API.key:
            return api_versions()
        return update_response(results={u.feature: (0, None) for u in body.feature_updates})

    nodes += [ScriptedNode(standby), ScriptedNode(active)]
    ports.update({1: nodes[0].port, 2: nodes[1].port})
    out, err = io.StringIO(), io.StringIO()
    argv = ["--bootstrap-controller", nodes[0].bootstrap, "upgrade", "--feature", f"{ELR}=1", "--dry-run"]
    assert features.main(argv, out=out, err=err) == 0, err.getvalue()
    assert out.getvalue() == f"{ELR} can be upgraded to 1.\n"
    sent = [r for r in nodes[1].requests if r[0] == update_features_msg.API.key]
    assert len(sent) == 1
    _, version, body = sent[0]
    assert version == 1 and body.validate_only is True
    assert [(u.feature, u.max_version_level, u.upgrade_type) for u in body.feature_updates] == [(ELR, 1, 1)]


def test_update_falls_back_to_describe_quorum_for_the_leader(nodes: list[ScriptedNode]) -> None:
    ports: dict[int, int] = {}

    def standby(key: int, _v: int, _body: Any) -> Any:
        if key == api_versions_msg.API.key:
            return api_versions()
        if key == describe_cluster_msg.API.key:
            return cluster_response(-1, {})  # does not know the controller
        if key == describe_quorum_msg.API.key:
            cls: Any = describe_quorum_msg.RESPONSE.cls
            partition = cls.TopicData.PartitionData(
                partition_index=0, error_code=6, leader_id=2, leader_epoch=4
            )
            listener = cls.Node.Listener
            return cls(
                error_code=0,
                topics=[cls.TopicData(topic_name="__cluster_metadata", partitions=[partition])],
                nodes=[
                    cls.Node(node_id=i, listeners=[listener(name="CONTROLLER", host="127.0.0.1", port=p)])
                    for i, p in sorted(ports.items())
                ],
            )
        return update_response(NOT_CONTROLLER)

    def active(key: int, _v: int, body: Any) -> Any:
        if key == api_versions_msg.API.key:
            return api_versions()
        return update_response(results={u.feature: (0, None) for u in body.feature_updates})

    nodes += [ScriptedNode(standby), ScriptedNode(active)]
    ports.update({1: nodes[0].port, 2: nodes[1].port})
    client = AdminClient([Address("127.0.0.1", nodes[0].port)], timeout_ms=5_000, retry_backoff_ms=1)
    assert client.update_features({ELR: (0, 3)}) == {ELR: None}
    sent = [r[2] for r in nodes[1].requests if r[0] == update_features_msg.API.key]
    assert [(u.max_version_level, u.upgrade_type) for u in sent[0].feature_updates] == [(0, 3)]


def test_a_top_level_error_fails_every_feature_as_kafkas_client_does(nodes: list[ScriptedNode]) -> None:
    def controller(key: int, _v: int, body: Any) -> Any:
        if key == api_versions_msg.API.key:
            return api_versions()
        return update_response(
            INVALID_UPDATE_VERSION,
            "Can't downgrade the version of feature metadata.version from 25 to 24 ...",
            {
                ELR: (INVALID_UPDATE_VERSION, "Another feature update failed."),
                MV: (INVALID_UPDATE_VERSION, "x"),
            },
        )

    nodes.append(ScriptedNode(controller))
    out, err = io.StringIO(), io.StringIO()
    argv = ["--bootstrap-controller", nodes[0].bootstrap, "upgrade"]
    argv += ["--feature", f"{ELR}=1", "--feature", f"{MV}=24"]
    assert features.main(argv, out=out, err=err) == 1
    reason = "Can't downgrade the version of feature metadata.version from 25 to 24 ..."
    assert out.getvalue().splitlines() == [
        f"Could not upgrade {ELR} to 1. {reason}",
        f"Could not upgrade {MV} to 24. {reason}",
    ]
    assert err.getvalue() == "2 out of 2 operation(s) failed.\n"


def test_a_missing_result_is_a_failure(nodes: list[ScriptedNode]) -> None:
    def controller(key: int, _v: int, body: Any) -> Any:
        if key == api_versions_msg.API.key:
            return api_versions()
        return update_response(results={ELR: (0, None)})

    nodes.append(ScriptedNode(controller))
    client = AdminClient([Address("127.0.0.1", nodes[0].port)], timeout_ms=2_000)
    assert client.update_features({ELR: (1, 1), MV: (25, 1)}) == {
        ELR: None,
        MV: (-1, f"The controller response did not contain a result for feature {MV}"),
    }
