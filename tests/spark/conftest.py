"""One SparkSession for every ``spark`` test of the run (starting one takes ~15 s)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from kraft.spark.session import kraft_session

    session = kraft_session("local[2]", "kraft-tests", {"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()
