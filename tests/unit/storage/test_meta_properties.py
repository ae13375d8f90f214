"""meta.properties: Kafka's format, strict reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from kraft.common.errors import StorageError
from kraft.common.uuids import random_uuid, uuid_from_base64, uuid_to_base64
from kraft.storage.meta_properties import (
    MetaProperties,
    decode_meta_properties,
    encode_meta_properties,
    read_meta_properties,
    write_meta_properties,
)

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def test_round_trip_and_kafka_layout(tmp_path: Path) -> None:
    meta = MetaProperties(
        cluster_id=CLUSTER, node_id=3, directory_id=uuid_from_base64("J8aAPcfLQt2bqs1JT_rMgQ")
    )
    write_meta_properties(tmp_path, meta)
    lines = (tmp_path / "meta.properties").read_text().splitlines()
    assert lines[0] == "#" and lines[1].startswith("#")
    assert sorted(lines[2:]) == sorted(
        ["node.id=3", "directory.id=J8aAPcfLQt2bqs1JT_rMgQ", "version=1", f"cluster.id={CLUSTER}"]
    )
    assert read_meta_properties(tmp_path) == meta


def test_reads_a_kafka_written_file() -> None:
    text = (
        "#\n#Tue Oct 22 10:00:00 UTC 2024\nnode.id=1\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\n"
        f"version=1\ncluster.id={CLUSTER}\n"
    )
    meta = decode_meta_properties(text)
    assert (meta.cluster_id, meta.node_id, uuid_to_base64(meta.directory_id or random_uuid())) == (
        CLUSTER,
        1,
        "J8aAPcfLQt2bqs1JT_rMgQ",
    )


def test_unformatted_directory_reads_as_none(tmp_path: Path) -> None:
    assert read_meta_properties(tmp_path) is None


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        (f"node.id=1\ncluster.id={CLUSTER}\n", "version was not found"),
        (f"version=1\ncluster.id={CLUSTER}\n", "node.id was not found"),
        ("version=1\nnode.id=1\n", "cluster.id was not found"),
        (f"version=0\nbroker.id=1\ncluster.id={CLUSTER}\n", "ZooKeeper"),
        (f"version=2\nnode.id=1\ncluster.id={CLUSTER}\n", "unsupported version"),
        (f"version=1\nnode.id=one\ncluster.id={CLUSTER}\n", "base-10"),
        (f"version=1\nnode.id=1\ncluster.id={CLUSTER}\ndirectory.id=nope\n", "directory.id"),
    ],
)
def test_strict_reading(tmp_path: Path, text: str, complaint: str) -> None:
    (tmp_path / "meta.properties").write_text(text)
    with pytest.raises(StorageError, match=complaint) as info:
        read_meta_properties(tmp_path)
    assert "meta.properties" in str(info.value)


def test_mismatching_cluster_or_node_id_is_an_error(tmp_path: Path) -> None:
    write_meta_properties(tmp_path, MetaProperties(cluster_id=CLUSTER, node_id=1))
    with pytest.raises(StorageError, match=r"invalid cluster\.id"):
        read_meta_properties(tmp_path, expected_cluster_id="AAAAAAAAAAAAAAAAAAAAAQ")
    with pytest.raises(StorageError, match=r"node\.id"):
        read_meta_properties(tmp_path, expected_node_id=2)
    assert read_meta_properties(tmp_path, expected_cluster_id=CLUSTER, expected_node_id=1) is not None


def test_encode_has_the_comment_header() -> None:
    data = encode_meta_properties(MetaProperties(cluster_id=CLUSTER, node_id=0), now_s=0)
    assert data.startswith(b"#\n#")
    assert b"directory.id" not in data
