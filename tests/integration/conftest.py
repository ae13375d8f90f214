"""Fixtures of the process-level tests (all marked ``slow``).

The cluster itself (``LocalCluster``, the waits, the timeouts) lives in
``tests/support/local_cluster.py`` so that benchmarks can drive real clusters too; the tests import
it from there (``from conftest import ...`` named whichever ``conftest`` module pytest had imported
first, so collecting ``tests/interaction`` beside this directory broke it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from local_cluster import LocalCluster

__all__ = ["LocalCluster", "dataplane_cluster", "local_cluster"]


@pytest.fixture
def local_cluster(tmp_path: Path) -> Iterator[Callable[..., LocalCluster]]:
    """Factory: ``local_cluster(controllers=3, overrides=...)``; everything is stopped at teardown."""
    made: list[LocalCluster] = []

    def factory(controllers: int = 3, overrides: dict[str, str] | None = None, **kw: object) -> LocalCluster:
        """``kw``: ``brokers=M``, ``combined=True``, ``cluster_id=...``."""
        c = LocalCluster(tmp_path / f"cluster-{len(made)}", controllers, overrides, **kw)  # type: ignore[arg-type]
        made.append(c)
        return c

    yield factory
    for c in made:
        c.stop_all()


@pytest.fixture(scope="session")
def dataplane_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """One 3 controllers + 3 brokers cluster for the data-plane modules that only add topics of their
    own (``xdist_group("dataplane-cluster")``: one worker runs them all, so it starts once)."""
    c = LocalCluster(tmp_path_factory.mktemp("dataplane"), 3, brokers=3)
    try:
        c.start_all()
        c.wait_for_leader()
        c.wait_for_brokers()
        yield c
    finally:
        c.stop_all()
