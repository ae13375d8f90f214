"""kraft leader-election: Kafka's kafka-leader-election.sh output and rules against in-process fake
brokers: one ElectLeaders to the controller (NOT_CONTROLLER followed), successes, no-ops and
failures, --all-topic-partitions, the JSON file, error exits and argument misuse."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_brokers import FakeBroker, FakeCluster, elect_leaders_body, metadata_answer

from kraft.cli import leader_election
from kraft.protocol.messages import elect_leaders as elect_leaders_msg
from kraft.protocol.messages import metadata as metadata_msg

pytestmark = pytest.mark.timeout(60)

PREFERRED, UNCLEAN = 0, 1
NONE, NOT_CONTROLLER, CLUSTER_AUTHORIZATION_FAILED = 0, 41, 31
UNKNOWN_TOPIC_OR_PARTITION, PREFERRED_LEADER_NOT_AVAILABLE, ELECTION_NOT_NEEDED = 3, 80, 84


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster() as c:
        yield c


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = leader_election.main(argv, out, err=err)
    return code, out.getvalue(), err.getvalue()


def bootstrap(broker: FakeBroker) -> list[str]:
    return [
        "--bootstrap-server",
        f"127.0.0.1:{broker.port}",
        "--timeout-ms",
        "3000",
        "--request-timeout-ms",
        "2000",
    ]


def requested(broker: FakeBroker) -> list[tuple[int, list[tuple[str, list[int]]] | None]]:
    out = []
    for r in broker.requests(elect_leaders_msg.API):
        parts = r.body.topic_partitions
        out.append(
            (r.body.election_type, None if parts is None else [(t.topic, t.partitions) for t in parts])
        )
    return out


def test_preferred_election_of_one_partition_goes_to_the_controller(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    b1.on(metadata_msg.API, metadata_answer([b1, b2], controller_id=2))
    b2.on(elect_leaders_msg.API, elect_leaders_body({("orders", 0): (NONE, None)}))
    code, out, err = run(
        [*bootstrap(b1), "--election-type", "preferred", "--topic", "orders", "--partition", "0"]
    )
    assert (code, out, err) == (
        0,
        "Successfully completed leader election (PREFERRED) for partitions orders-0\n",
        "",
    )
    assert requested(b2) == [(PREFERRED, [("orders", [0])])]
    assert b2.requests(elect_leaders_msg.API)[0].version == 2
    assert not b1.requests(elect_leaders_msg.API)


def test_results_are_grouped_into_kafkas_three_kinds_of_line(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    b1.on(
        elect_leaders_msg.API,
        elect_leaders_body(
            {
                ("a", 1): (NONE, None),
                ("a", 0): (NONE, None),
                ("b", 0): (ELECTION_NOT_NEEDED, None),
                ("c", 2): (PREFERRED_LEADER_NOT_AVAILABLE, "Failed to elect leader for partition c-2 under "
                                                           "strategy PreferredElection"),
                ("d", 0): (UNKNOWN_TOPIC_OR_PARTITION, None),
            }
        ),
    )  # fmt: skip
    code, out, err = run([*bootstrap(b1), "--election-type", "PREFERRED", "--all-topic-partitions"])
    assert code == 1
    assert out == (
        "Successfully completed leader election (PREFERRED) for partitions a-0, a-1\n"
        "Valid replica already elected for partitions b-0\n"
        "Error completing leader election (PREFERRED) for partition: c-2: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for "
        "partition c-2 under strategy PreferredElection\n"
        "Error completing leader election (PREFERRED) for partition: d-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this "
        "topic-partition.\n"
    )
    assert err == "2 replica(s) could not be elected\n"
    assert requested(b1) == [(PREFERRED, None)]  # null TopicPartitions: every partition


def test_unclean_election_from_a_json_file(cluster: FakeCluster, tmp_path: Path) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    b1.on(elect_leaders_msg.API, elect_leaders_body({("foo", 1): (NONE, None), ("bar", 2): (NONE, None)}))
    path = tmp_path / "election.json"
    path.write_text(
        json.dumps({"partitions": [{"topic": "foo", "partition": 1}, {"topic": "bar", "partition": 2}]})
    )
    code, out, _ = run([*bootstrap(b1), "--election-type", "unclean", "--path-to-json-file", str(path)])
    assert (code, out) == (
        0,
        "Successfully completed leader election (UNCLEAN) for partitions bar-2, foo-1\n",
    )
    assert requested(b1) == [(UNCLEAN, [("foo", [1]), ("bar", [2])])]


def test_a_valid_leader_everywhere_is_success(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    b1.on(elect_leaders_msg.API, elect_leaders_body({("t", 0): (ELECTION_NOT_NEEDED, None)}))
    code, out, err = run([*bootstrap(b1), "--election-type", "preferred", "--topic", "t", "--partition", "0"])
    assert (code, out, err) == (0, "Valid replica already elected for partitions t-0\n", "")


def test_not_controller_is_followed(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    controllers = iter([1, 2, 2, 2])
    b1.on(metadata_msg.API, lambda req: metadata_answer([b1, b2], next(controllers))(req))
    b1.on(elect_leaders_msg.API, elect_leaders_body({}, error_code=NOT_CONTROLLER))
    b2.on(elect_leaders_msg.API, elect_leaders_body({("t", 0): (NONE, None)}))
    code, out, _ = run([*bootstrap(b1), "--election-type", "preferred", "--topic", "t", "--partition", "0"])
    assert (code, out) == (0, "Successfully completed leader election (PREFERRED) for partitions t-0\n")
    assert (len(requested(b1)), len(requested(b2))) == (1, 1)


def test_top_level_errors_fail_the_command(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    b1.on(elect_leaders_msg.API, elect_leaders_body({}, error_code=CLUSTER_AUTHORIZATION_FAILED))
    argv = [*bootstrap(b1), "--election-type", "preferred", "--all-topic-partitions"]
    assert run(argv) == (1, "", "Not authorized to perform leader election\n")
    b1.on(elect_leaders_msg.API, elect_leaders_body({}, error_code=42))
    code, out, err = run(argv)
    assert (code, out) == (1, "")
    assert err.startswith("Error while making request: INVALID_REQUEST: This most likely occurs")


def test_json_output(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    b1.on(
        elect_leaders_msg.API,
        elect_leaders_body(
            {("a", 0): (NONE, None), ("b", 0): (ELECTION_NOT_NEEDED, None), ("c", 0): (3, "gone")}
        ),
    )
    code, out, err = run([*bootstrap(b1), "--election-type", "preferred", "--all-topic-partitions", "--json"])
    assert (code, err) == (1, "1 replica(s) could not be elected\n")
    assert json.loads(out) == {
        "electionType": "PREFERRED",
        "succeeded": [{"topic": "a", "partition": 0}],
        "noop": [{"topic": "b", "partition": 0}],
        "failed": [{"topic": "c", "partition": 0, "error": "UNKNOWN_TOPIC_OR_PARTITION", "message": "gone"}],
    }


def test_an_unreachable_cluster_is_a_timeout() -> None:
    code, out, err = run(
        ["--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "200", "--election-type", "preferred",
         "--all-topic-partitions"]
    )  # fmt: skip
    assert (code, out) == (1, "")
    assert err.startswith(
        "Timeout waiting for election results: timed out after 200 ms waiting for ElectLeaders"
    )
    assert err.count("\n") == 1


def test_exception_names_follow_kafkas_classes() -> None:
    assert leader_election.exception_name(80).endswith(".PreferredLeaderNotAvailableException")
    assert leader_election.exception_name(83).endswith(".EligibleLeadersNotAvailableException")
    assert leader_election.exception_name(7).endswith(".TimeoutException")
    assert leader_election.exception_name(29).endswith(".TopicAuthorizationException")
    assert leader_election.exception_name(9999).endswith(".UnknownServerException")


BS = ["--bootstrap-server", "h:1"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--topic", "t", "--partition", "0"], "Missing required option(s): bootstrap-server, election-type"),
        ([*BS, "--topic", "t", "--partition", "0"], "Missing required option(s): election-type"),
        ([*BS, "--election-type", "preferred"],
         "One and only one of the following options is required: topic, all-topic-partitions, "
         "path-to-json-file"),
        ([*BS, "--election-type", "preferred", "--topic", "t", "--partition", "0", "--all-topic-partitions"],
         "One and only one of the following options is required"),
        ([*BS, "--election-type", "preferred", "--topic", "t"], "Missing required option(s): partition"),
        ([*BS, "--election-type", "preferred", "--all-topic-partitions", "--partition", "1"],
         "Option partition is only allowed if topic is used"),
        ([*BS, "--election-type", "fastest", "--all-topic-partitions"],
         "Invalid election type 'fastest': expected one of PREFERRED, UNCLEAN"),
        ([*BS, "--election-type", "preferred", "--path-to-json-file", "/nonexistent/x.json"],
         "cannot read /nonexistent/x.json"),
    ],
)  # fmt: skip
def test_misuse_exits_2_with_one_line_naming_the_problem(argv: list[str], message: str) -> None:
    code, out, err = run(argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"{leader_election.PROG}: {message}")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Replica election data is empty"),
        ("{", "Replica election data is not valid JSON"),
        ('{"topics": []}', 'Replica election data is missing "partitions" field'),
        ('{"partitions": [{"topic": "a"}]}', 'Replica election data has an entry without a string "topic"'),
        (
            '{"partitions": [{"topic": "a", "partition": 1}, {"topic": "a", "partition": 1}]}',
            "Replica election data contains duplicate partitions: [a-1]",
        ),
    ],
)
def test_bad_election_files_are_misuse(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(text)
    code, out, err = run([*BS, "--election-type", "preferred", "--path-to-json-file", str(path)])
    assert (code, out) == (2, "")
    assert err.startswith(f"{leader_election.PROG}: {message}")
