"""``kraft features`` against real controller processes (no mocks): describe through ApiVersions v3+,
a downgrade sent to a standby (NOT_CONTROLLER followed to the active controller), a dry-run and a
real upgrade, a refused upgrade; then ``kraft metadata-shell`` reads the result back from a node's
log directory."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from local_cluster import LocalCluster

from kraft.cli import features, metadata_shell

pytestmark = pytest.mark.slow

ELR = "eligible.leader.replicas.version"


def kraft_features(bootstrap: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["--bootstrap-controller", bootstrap, "--timeout-ms", "15000", *args]
    code = features.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def elr_line(bootstrap: str) -> str:
    code, out, err = kraft_features(bootstrap, "describe")
    assert code == 0, err
    return next(line for line in out.splitlines() if line.startswith(f"Feature: {ELR}\t"))


def test_features_describe_downgrade_and_upgrade_on_real_controllers(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    info = cluster.wait_for_leader()
    leader = cluster.address(info.leader_id)
    standby_id = next(i for i in cluster.ids if i != info.leader_id)
    standby = cluster.address(standby_id)
    at_leader = f"{leader.host}:{leader.port}"
    at_standby = f"{standby.host}:{standby.port}"

    def describe_once_finalized() -> str | None:
        # A new leader finalizes features when its bootstrap records commit, a moment after it is
        # elected; ApiVersions reports none before (as Kafka's controller does).
        code, out, err = kraft_features(at_leader, "describe")
        assert code == 0, err
        return None if "FinalizedVersionLevel: UNKNOWN 0" in out else out

    out = cluster.wait_for("the bootstrap features to be finalized", describe_once_finalized)
    lines = out.splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        f"Feature: {ELR}",
        "Feature: group.version",
        "Feature: kraft.version",
        "Feature: metadata.version",
        "Feature: transaction.version",
    ]
    mv = next(line for line in lines if line.startswith("Feature: metadata.version"))
    assert mv.split("\t")[1:4] == [
        "SupportedMinVersion: 3.0-IV1",
        "SupportedMaxVersion: 4.0-IV3",
        "FinalizedVersionLevel: 4.0-IV3",
    ]
    assert int(mv.split("\t")[4].removeprefix("Epoch: ")) > 0
    # New clusters start with ELR on (spec 5.2 DECISION).
    assert "FinalizedVersionLevel: 1\t" in elr_line(at_leader)

    # Sent to a standby only: it answers NOT_CONTROLLER and the client finds the active one.
    code, out, err = kraft_features(at_standby, "downgrade", "--feature", f"{ELR}=0")
    assert (code, out) == (0, f"{ELR} was downgraded to 0.\n"), err
    assert "FinalizedVersionLevel: 0\t" in elr_line(at_leader)

    code, out, err = kraft_features(at_standby, "upgrade", "--feature", f"{ELR}=1", "--dry-run")
    assert (code, out) == (0, f"{ELR} can be upgraded to 1.\n"), err
    assert "FinalizedVersionLevel: 0\t" in elr_line(at_leader)  # a dry run changes nothing

    code, out, err = kraft_features(at_leader, "upgrade", "--feature", f"{ELR}=1")
    assert (code, out) == (0, f"{ELR} was upgraded to 1.\n"), err
    assert "FinalizedVersionLevel: 1\t" in elr_line(at_leader)

    code, out, err = kraft_features(at_leader, "upgrade", "--feature", f"{ELR}=2")
    assert code == 1
    assert out.startswith(f"Could not upgrade {ELR} to 2. ")
    assert err == "1 out of 1 operation(s) failed.\n"

    # Every node replays the change; the shell reads it from a standby's files.
    cluster.wait_for(
        "the standby to apply the upgrade",
        lambda: True if "FinalizedVersionLevel: 1\t" in elr_line(at_standby) else None,
    )
    cluster.stop_all()
    out_io, err_io = io.StringIO(), io.StringIO()
    argv = ["--log-dir", cluster.node(standby_id).log_dir, "cat", f"/image/features/finalized_{ELR}"]
    assert metadata_shell.main(argv, out=out_io, err=err_io) == 0, err_io.getvalue()
    assert out_io.getvalue() == "1\n"


def test_kraft_version_upgrade_turns_a_static_quorum_dynamic(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    """Kafka 4.1's static -> dynamic upgrade (KAFKA-16538) on real processes: after
    ``upgrade --feature kraft.version=1`` the voter set is in the log, and a voter can be removed."""
    from kraft.cli import metadata_quorum

    cluster = local_cluster(3)
    cluster.start_all()
    info = cluster.wait_for_leader()
    leader = cluster.address(info.leader_id)
    at_leader = f"{leader.host}:{leader.port}"

    def kraft_line() -> str:
        code, out, err = kraft_features(at_leader, "describe")
        assert code == 0, err
        return next(line for line in out.splitlines() if line.startswith("Feature: kraft.version\t"))

    def quorum(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        argv = ["--bootstrap-controller", at_leader, "--timeout-ms", "15000", *args]
        code = metadata_quorum.main(argv, out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    assert "FinalizedVersionLevel: 0\t" in kraft_line()
    code, out, err = quorum(
        "remove-controller", "--controller-id", "3", "--controller-directory-id", "AAAAAAAAAAAAAAAAAAAAAA"
    )
    assert code != 0  # static voters cannot change
    # Refused (retriable) until every voter has fetched: the leader learns their directory ids
    # from the Fetches. The dry run checks the same, and changes nothing.
    cluster.wait_for(
        "the upgrade to validate",
        lambda: (
            True
            if kraft_features(at_leader, "upgrade", "--feature", "kraft.version=1", "--dry-run")[0] == 0
            else None
        ),
    )
    assert "FinalizedVersionLevel: 0\t" in kraft_line()
    code, out, err = kraft_features(at_leader, "upgrade", "--feature", "kraft.version=1")
    assert (code, out) == (0, "kraft.version was upgraded to 1.\n"), err
    assert "FinalizedVersionLevel: 1\t" in kraft_line()
    code, out, err = quorum("describe", "--status", "--json")
    assert code == 0, err
    status = json.loads(out)
    voters = {v["id"]: v["directoryId"] for v in status["currentVoters"]}
    assert set(voters) == {1, 2, 3} and all(voters.values())
    victim = next(i for i in voters if i != info.leader_id)
    code, out, err = quorum(
        "remove-controller", "--controller-id", str(victim), "--controller-directory-id", voters[victim]
    )
    assert code == 0, err
    assert out.startswith(f"Removed  KRaft controller {victim} ")
