"""``kraft storage``: random-uuid, format and info, called through ``main``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kraft.cli.storage import main
from kraft.common.uuids import uuid_from_base64
from kraft.metadata.bootstrap import BootstrapMetadata
from kraft.storage.bootstrap_file import read_bootstrap_checkpoint
from kraft.storage.meta_properties import read_meta_properties

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def write_config(tmp_path: Path, **extra: str) -> Path:
    props = {
        "process.roles": "controller",
        "node.id": "1",
        "log.dirs": f"{tmp_path / 'a'},{tmp_path / 'b'}",
        "metadata.log.dir": str(tmp_path / "meta"),
        "controller.quorum.voters": "1@localhost:9093",
        **extra,
    }
    path = tmp_path / "server.properties"
    path.write_text("# test config\n" + "".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_random_uuid_prints_a_kafka_uuid() -> None:
    code, out, _ = run("random-uuid")
    assert code == 0
    text = out.strip()
    assert len(text) == 22 and not text.startswith("-")
    uuid_from_base64(text)
    assert run("random-uuid")[1].strip() != text


def test_format_writes_meta_properties_with_distinct_directory_ids(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    code, out, err = run("format", "--config", str(config), "--cluster-id", CLUSTER)
    assert (code, err) == (0, "")
    assert f"Formatting metadata directory {tmp_path / 'meta'} with metadata.version" in out
    assert f"Formatting data directory {tmp_path / 'a'}" in out
    metas = [read_meta_properties(tmp_path / d) for d in ("a", "b", "meta")]
    assert all(m is not None and (m.cluster_id, m.node_id) == (CLUSTER, 1) for m in metas)
    ids = {m.directory_id for m in metas if m is not None}
    assert len(ids) == 3 and None not in ids


def test_format_refuses_an_already_formatted_directory_unless_told(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER)[0] == 0
    before = (tmp_path / "meta" / "meta.properties").read_bytes()
    code, _, err = run("format", "-c", str(config), "-t", CLUSTER)
    assert code == 1 and "already formatted" in err and "--ignore-formatted" in err
    code, out, _ = run("format", "-c", str(config), "-t", CLUSTER, "--ignore-formatted")
    assert code == 0 and "All of the log directories are already formatted." in out
    assert (tmp_path / "meta" / "meta.properties").read_bytes() == before


def test_ignore_formatted_formats_only_the_new_directories(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER)[0] == 0
    config.write_text(config.read_text() + f"log.dirs={tmp_path / 'a'},{tmp_path / 'c'}\n")
    code, out, _ = run("format", "-c", str(config), "-t", CLUSTER, "-g")
    assert code == 0
    assert str(tmp_path / "c") in out and str(tmp_path / "a") not in out
    assert read_meta_properties(tmp_path / "c") is not None


def test_format_refuses_a_directory_of_another_cluster_even_with_ignore_formatted(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER)[0] == 0
    (tmp_path / "b" / "meta.properties").unlink()
    code, _, err = run("format", "-c", str(config), "-t", "AAAAAAAAAAAAAAAAAAAAAQ", "-g")
    assert code == 1 and "cluster.id" in err
    assert read_meta_properties(tmp_path / "b") is None  # nothing written


@pytest.mark.parametrize("bad", ["not-a-uuid", "MkU3OEVBNTcwNTJENDM2Q", "MkU3OEVBNTcwNTJENDM2Q!"])
def test_format_validates_the_cluster_id(tmp_path: Path, bad: str) -> None:
    code, _, err = run("format", "-c", str(write_config(tmp_path)), "-t", bad)
    assert code == 1 and "does not appear to be a valid UUID" in err
    assert not (tmp_path / "meta").exists()


def test_format_needs_a_kraft_config(tmp_path: Path) -> None:
    config = tmp_path / "server.properties"
    config.write_text(f"node.id=1\nlog.dirs={tmp_path / 'a'}\n")
    code, _, err = run("format", "-c", str(config), "-t", CLUSTER)
    assert code == 1 and "process.roles" in err
    config.write_text(f"process.roles=controller\nlog.dirs={tmp_path / 'a'}\n")
    code, _, err = run("format", "-c", str(config), "-t", CLUSTER)
    assert code == 1 and "node.id" in err
    code, _, err = run("format", "-c", str(tmp_path / "missing.properties"), "-t", CLUSTER)
    assert code == 1 and "does not exist" in err


def test_info_prints_like_kafka(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER)[0] == 0
    code, out, _ = run("info", "-c", str(config))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Found log directories:"
    assert lines[1:4] == [f"  {tmp_path / d}" for d in ("a", "b", "meta")]
    meta = read_meta_properties(tmp_path / "a")
    assert meta is not None and meta.directory_id is not None
    assert any(
        line.startswith(f"Found metadata: {{cluster.id={CLUSTER}, directory.id=")
        and line.endswith("node.id=1, version=1}")
        for line in lines
    )


def test_info_reports_problems_and_fails(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    (tmp_path / "a").mkdir()
    code, out, _ = run("info", "-c", str(config))
    assert code == 1
    assert "Found problems:" in out
    assert f"  {tmp_path / 'a'} is not formatted." in out
    assert f"  {tmp_path / 'b'} does not exist" in out


def test_info_json_lists_every_directory_id(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER)[0] == 0
    code, out, _ = run("info", "-c", str(config), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["metadata"]["cluster.id"] == CLUSTER
    assert report["problems"] == []
    ids = [d["directory_id"] for d in report["directories"]]
    assert len(set(ids)) == 3
    for d in report["directories"]:
        meta = read_meta_properties(d["path"])
        assert meta is not None and meta.directory_id is not None
        uuid_from_base64(d["directory_id"])


# ---------------------------------------------------------------------------------------------------
# Bootstrap metadata: --release-version, --feature and bootstrap.checkpoint


def entries(tmp_path: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))


def test_format_writes_the_default_bootstrap_checkpoint_into_every_formatted_directory(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    code, out, err = run("format", "-c", str(config), "-t", CLUSTER)
    assert (code, err) == (0, "")
    assert f"Formatting metadata directory {tmp_path / 'meta'} with metadata.version 4.0-IV3." in out
    assert f"Formatting data directory {tmp_path / 'a'} with metadata.version 4.0-IV3." in out
    expected = BootstrapMetadata({"metadata.version": 25, "eligible.leader.replicas.version": 1})
    for d in ("a", "b", "meta"):
        # In the log directory itself (beside meta.properties), as Kafka's Formatter writes it.
        assert sorted(p.name for p in (tmp_path / d).iterdir()) == ["bootstrap.checkpoint", "meta.properties"]
        assert read_bootstrap_checkpoint(tmp_path / d) == expected


@pytest.mark.parametrize(
    ("flags", "printed", "features"),
    [
        (["--release-version", "3.7"], "3.7-IV4", {"metadata.version": 19}),
        (["-r", "3.7-IV2"], "3.7-IV2", {"metadata.version": 17}),
        (["-r", "24"], "4.0-IV2", {"metadata.version": 24, "eligible.leader.replicas.version": 1}),
        (["-r", "4.0-IV1"], "4.0-IV1", {"metadata.version": 23}),
        (["--feature", "metadata.version=21"], "3.9-IV0", {"metadata.version": 21}),
        (
            ["-r", "4.0", "--feature", "eligible.leader.replicas.version=0"],
            "4.0-IV3",
            {"metadata.version": 25},
        ),
        (
            [
                "-r",
                "4.0",
                "-f",
                "group.version=1",
                "--feature",
                "transaction.version=2",
                "-f",
                "kraft.version=0",
            ],
            "4.0-IV3",
            {
                "metadata.version": 25,
                "eligible.leader.replicas.version": 1,
                "group.version": 1,
                "transaction.version": 2,
            },
        ),
        (
            ["-r", "4.0-IV3", "-f", "metadata.version=25"],
            "4.0-IV3",
            {"metadata.version": 25, "eligible.leader.replicas.version": 1},
        ),
    ],
)
def test_format_bootstraps_the_release_version_and_features_given(
    tmp_path: Path, flags: list[str], printed: str, features: dict[str, int]
) -> None:
    code, out, err = run("format", "-c", str(write_config(tmp_path)), "-t", CLUSTER, *flags)
    assert (code, err) == (0, "")
    assert f"with metadata.version {printed}." in out
    bootstrap = read_bootstrap_checkpoint(tmp_path / "meta")
    assert bootstrap is not None and bootstrap.features == features


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["-f", "share.version=1"],
            "unknown feature 'share.version'; known features: eligible.leader.replicas",
        ),
        (["-f", "group.version"], "--feature 'group.version' is not of the form NAME=LEVEL"),
        (["-f", "=1"], "is not of the form NAME=LEVEL"),
        (["-f", "group.version=x"], "the level of group.version must be a whole number"),
        (["-f", "group.version=2"], "group.version=2 is out of range; valid levels are 0 to 1"),
        (["-f", "transaction.version=3"], "transaction.version=3 is out of range; valid levels are 0 to 2"),
        (["-f", "eligible.leader.replicas.version=5"], "valid levels are 0 to 1"),
        (
            ["-f", "metadata.version=26"],
            "metadata.version=26 is out of range; valid levels are 4 (3.3-IV0) to 25",
        ),
        (["-r", "3.0"], "metadata.version 1 (3.0-IV1) is too old to bootstrap a cluster"),
        (
            ["-f", "kraft.version=1"],
            "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags",
        ),
        (
            ["-r", "4.0-IV1", "-f", "eligible.leader.replicas.version=1"],
            "eligible.leader.replicas.version=1 needs metadata.version 24 (4.0-IV2) or later, "
            "but it is 23 (4.0-IV1)",
        ),
        (["-r", "4.0", "-f", "metadata.version=24"], "--release-version 4.0-IV3 (level 25) and --feature"),
        (["-f", "group.version=1", "-f", "group.version=0"], "--feature group.version is given twice"),
        (["-r", "5.1"], "unknown metadata.version '5.1'; known: 3.0, 3.1"),
    ],
)
def test_format_refuses_bad_features_and_writes_nothing(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    config = write_config(tmp_path)
    code, out, err = run("format", "-c", str(config), "-t", CLUSTER, *flags)
    assert code == 1 and out == ""
    assert err.startswith("kraft storage format: ") and message in err, err
    assert entries(tmp_path) == ["server.properties"]  # no directory, no meta.properties, no bootstrap


def test_bad_features_are_refused_before_touching_formatted_directories(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER, "-r", "3.9")[0] == 0
    (tmp_path / "b" / "meta.properties").unlink()
    (tmp_path / "b" / "bootstrap.checkpoint").unlink()
    before = {p: (tmp_path / p).read_bytes() for p in entries(tmp_path) if (tmp_path / p).is_file()}
    code, _, err = run("format", "-c", str(config), "-t", CLUSTER, "-g", "-f", "kraft.version=1")
    assert code == 1 and "Cannot set kraft.version to 1" in err
    after = {p: (tmp_path / p).read_bytes() for p in entries(tmp_path) if (tmp_path / p).is_file()}
    assert after == before


def test_ignore_formatted_leaves_existing_bootstrap_files_alone(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER, "-r", "3.9")[0] == 0
    old = (tmp_path / "meta" / "bootstrap.checkpoint").read_bytes()
    config.write_text(config.read_text() + f"log.dirs={tmp_path / 'a'},{tmp_path / 'c'}\n")
    code, out, _ = run("format", "-c", str(config), "-t", CLUSTER, "-g")
    assert code == 0 and f"Formatting data directory {tmp_path / 'c'} with metadata.version 4.0-IV3." in out
    assert (tmp_path / "meta" / "bootstrap.checkpoint").read_bytes() == old
    bootstrap = read_bootstrap_checkpoint(tmp_path / "c")
    assert bootstrap is not None and bootstrap.metadata_version == 25


def test_format_help_describes_release_version_and_features(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["format", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--release-version VERSION" in text and "Default: the latest, 4.0-IV3 (25)" in text
    assert "--feature NAME=LEVEL" in text and "repeatable" in text
    assert "eligible.leader.replicas.version (0..1)" in text and "kraft.version (0..1)" in text
    assert "metadata.version (4..25)" in text and "transaction.version (0..2)" in text


def test_info_shows_the_bootstrap_metadata(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER, "-f", "group.version=1")[0] == 0
    code, out, _ = run("info", "-c", str(config))
    assert code == 0
    assert (
        "Found bootstrap metadata: {metadata.version=25 (4.0-IV3), eligible.leader.replicas.version=1, "
        "group.version=1}"
    ) in out.splitlines()
    code, out, _ = run("info", "-c", str(config), "--json")
    assert code == 0
    assert json.loads(out)["bootstrap"] == {
        "path": str(tmp_path / "meta" / "bootstrap.checkpoint"),
        "metadata_version": 25,
        "release_version": "4.0-IV3",
        "features": {"metadata.version": 25, "eligible.leader.replicas.version": 1, "group.version": 1},
    }


def test_info_without_a_bootstrap_file_shows_none(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER)[0] == 0
    (tmp_path / "meta" / "bootstrap.checkpoint").unlink()
    code, out, _ = run("info", "-c", str(config))
    assert code == 0 and "Found bootstrap metadata" not in out
    assert json.loads(run("info", "-c", str(config), "--json")[1])["bootstrap"] is None


def test_info_reports_a_corrupt_bootstrap_file_as_a_problem(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert run("format", "-c", str(config), "-t", CLUSTER)[0] == 0
    path = tmp_path / "meta" / "bootstrap.checkpoint"
    path.write_bytes(path.read_bytes()[:-3])
    code, out, _ = run("info", "-c", str(config))
    assert code == 1
    assert f"  {path} is not a valid bootstrap checkpoint: " in out
    report = json.loads(run("info", "-c", str(config), "--json")[1])
    assert report["bootstrap"] is None and any(str(path) in p for p in report["problems"])
