"""One SparkSession for every ``spark`` test of the run (starting one takes ~15 s), and real
clusters on loopback for the streaming tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from kraft.spark.session import kraft_session

    _claim_the_one_session(tmp_path_factory)

    conf = {
        "spark.sql.shuffle.partitions": "4",
        # The tests run many small queries, each planned and code-generated once: C1 alone (no C2
        # compiler threads competing for the two cores) and the serial collector made the spark
        # tests about 10 % faster here (2026-11-28). Users' sessions keep the JVM's defaults.
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    }
    session = kraft_session("local[2]", "kraft-tests", conf)
    yield session
    session.stop()


def _claim_the_one_session(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Fail loudly when a second xdist worker starts a SparkSession: the ``spark`` tests are meant
    to share one (``xdist_group("spark")`` with ``--dist loadgroup``), and when grouping silently
    breaks (pytest 9.2 with pytest-xdist 3.8.0 did) the run starts two JVMs and builds every
    module fixture twice, minutes longer with nothing failing."""
    import os

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return
    claim = tmp_path_factory.getbasetemp().parent / "spark-session-worker"
    try:
        fd = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        pytest.fail(
            f"worker {worker} would start a second SparkSession ({claim.read_text()} has one): "
            "the spark tests are not grouped on one worker; run with --dist loadgroup and check "
            "that pytest-xdist still honours xdist_group with this pytest",
            pytrace=False,
        )
    with os.fdopen(fd, "w") as f:
        f.write(worker)


def _integration_conftest() -> Any:
    """``tests/integration/conftest.py`` (``LocalCluster``), loaded under its own module name so
    that it cannot clash with this conftest."""
    import importlib.util
    import sys
    from pathlib import Path

    name = "kraft_tests_integration_conftest"
    if name not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "integration" / "conftest.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def local_cluster_class() -> Any:
    """``tests/integration``'s ``LocalCluster``: real nodes on loopback, kill -9 and restart."""
    return _integration_conftest().LocalCluster


@pytest.fixture
def local_cluster(tmp_path: Any, local_cluster_class: Any) -> Iterator[Any]:
    """Factory of real clusters (``LocalCluster``): ``local_cluster(controllers=3, overrides=...)``;
    every node is stopped at teardown."""
    made: list[Any] = []
    cluster_class = local_cluster_class

    def factory(controllers: int = 3, overrides: dict[str, str] | None = None, **kw: Any) -> Any:
        c = cluster_class(tmp_path / f"cluster-{len(made)}", controllers, overrides, **kw)
        made.append(c)
        return c

    yield factory
    for c in made:
        c.stop_all()
