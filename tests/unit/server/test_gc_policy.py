"""kraft.server.gc_policy: survivors of a full collection are frozen; a sweep frees cycles among them."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from kraft.server.gc_policy import FrozenSurvivors


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def policy(clock: _Clock) -> Iterator[FrozenSurvivors]:
    gc.collect()
    p = FrozenSurvivors(sweep_interval_s=600, clock=clock)
    p.install()
    try:
        yield p
    finally:
        p.uninstall()
        gc.collect()


def test_a_full_collection_freezes_its_survivors(policy: FrozenSurvivors) -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    kept = [_Node() for _ in range(100)]
    gc.collect()
    assert policy.full_collections == 1
    assert gc.get_freeze_count() >= len(kept)
    # A younger collection freezes nothing more: its survivors stay in the collector's generations
    # (not the permanent one), and the frozen count does not grow (it may shrink: frozen objects
    # still die by reference count, and other threads of the test process drop theirs).
    more = [_Node() for _ in range(100)]
    frozen = gc.get_freeze_count()
    gc.collect(0)
    assert gc.get_freeze_count() <= frozen
    collected = {id(o) for generation in range(3) for o in gc.get_objects(generation=generation)}
    assert all(id(node) in collected for node in more)


def test_frozen_objects_still_die_by_reference_count(policy: FrozenSurvivors) -> None:
    node = _Node()
    ref = weakref.ref(node)
    gc.collect()  # frozen now
    del node
    assert ref() is None


def test_a_cycle_frozen_before_it_became_garbage_is_freed_at_the_sweep(
    policy: FrozenSurvivors, clock: _Clock
) -> None:
    ref = _cycle()
    holder = [ref()]
    gc.collect()  # the cycle survives (held) and is frozen
    holder.clear()
    gc.collect()
    assert ref() is not None, "between sweeps, garbage cycles among frozen objects wait"
    clock.now += 599
    gc.collect()
    assert ref() is not None and policy.sweeps == 0
    clock.now += 1
    gc.collect()
    assert ref() is None and policy.sweeps == 1
    # The sweep's survivors are frozen again, and the next sweep is an interval away.
    assert gc.get_freeze_count() > 0
    ref = _cycle()
    holder = [ref()]
    gc.collect()
    holder.clear()
    clock.now += 300
    gc.collect()
    assert ref() is not None and policy.sweeps == 1


def test_a_young_cycle_is_collected_as_usual(policy: FrozenSurvivors) -> None:
    ref = _cycle()
    gc.collect()
    assert ref() is None


def test_uninstall_gives_everything_back(clock: _Clock) -> None:
    p = FrozenSurvivors(clock=clock)
    p.install()
    p.install()  # once only
    assert gc.callbacks.count(p._callback) == 1
    ref = _cycle()
    holder = [ref()]
    gc.collect()
    assert gc.get_freeze_count() > 0
    p.uninstall()
    assert p._callback not in gc.callbacks
    assert gc.get_freeze_count() == 0
    holder.clear()
    gc.collect()
    assert ref() is None


def test_server_start_installs_the_policy_before_running_the_node(monkeypatch: pytest.MonkeyPatch) -> None:
    import kraft.server.config as config_module
    import kraft.server.kraft_server as server_module
    import kraft.server.process_limits as limits_module
    from kraft.cli import server_start

    seen: list[FrozenSurvivors] = []

    def fake_run(config: object, *, use_uvloop: bool) -> int:
        seen.extend(
            cb.__self__ for cb in gc.callbacks if isinstance(getattr(cb, "__self__", None), FrozenSurvivors)
        )
        return 0

    monkeypatch.setattr(config_module, "load_server_config", lambda path, overrides: object())
    monkeypatch.setattr(server_module, "run_server", fake_run)
    monkeypatch.setattr(limits_module, "raise_open_file_limit", lambda: None)
    try:
        assert server_start.main(["server.properties"]) == 0
        assert len(seen) == 1
    finally:
        for p in seen:
            p.uninstall()
