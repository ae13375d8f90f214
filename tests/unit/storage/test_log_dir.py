"""The one function that names a partition directory, and the metadata partition's name built on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kraft.common.errors import KraftError
from kraft.storage.log_dir import (
    METADATA_PARTITION_DIR_NAME,
    metadata_partition_dir,
    partition_dir,
    partition_dir_name,
    quorum_state_path,
)


def test_a_partition_directory_is_topic_dash_partition_as_in_kafka(tmp_path: Path) -> None:
    assert partition_dir_name("orders", 3) == "orders-3"
    assert partition_dir(tmp_path, "my-topic.v2", 0) == tmp_path / "my-topic.v2-0"
    assert partition_dir(str(tmp_path), "orders", 11) == tmp_path / "orders-11"


def test_the_metadata_partition_directory_is_cluster_metadata_0(tmp_path: Path) -> None:
    assert METADATA_PARTITION_DIR_NAME == "__cluster_metadata-0"
    assert metadata_partition_dir(tmp_path) == tmp_path / "__cluster_metadata-0"
    assert quorum_state_path(tmp_path) == tmp_path / "__cluster_metadata-0" / "quorum-state"


@pytest.mark.parametrize(("topic", "partition"), [("", 0), ("a/b", 0), ("..", 0), (".", 1), ("orders", -1)])
def test_names_that_would_leave_the_log_directory_are_refused(topic: str, partition: int) -> None:
    with pytest.raises(KraftError, match="no partition directory"):
        partition_dir_name(topic, partition)
