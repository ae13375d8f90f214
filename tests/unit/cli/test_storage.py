"""``kraft storage``: random-uuid, format and info, called through ``main``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kraft.cli.storage import main
from kraft.storage.meta_properties import read_meta_properties
from kraft.storage.uuids import uuid_from_base64

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
