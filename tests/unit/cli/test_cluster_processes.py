"""Picking free loopback ports for local clusters and the process-level tests."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kraft.cli import cluster_processes as processes


def test_ports_are_picked_below_the_ephemeral_range_and_are_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outgoing connections take their local port from the ephemeral range: a port picked there
    # could be taken before the server binds it.
    range_file = tmp_path / "ip_local_port_range"
    range_file.write_text("32768\t60999\n")
    monkeypatch.setattr(processes, "_EPHEMERAL_RANGE_FILE", range_file)
    ports = processes.free_ports(5)
    assert len(set(ports)) == 5
    assert all(20_000 <= p < 32_768 for p in ports)
    assert not any(processes.port_in_use("127.0.0.1", p) for p in ports)


@pytest.mark.parametrize("content", [None, "garbage", "20500 60999"])
def test_the_kernel_picks_when_the_range_is_unknown_or_leaves_no_room_below(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | None
) -> None:
    range_file = tmp_path / "ip_local_port_range"
    if content is not None:
        range_file.write_text(content)
    monkeypatch.setattr(processes, "_EPHEMERAL_RANGE_FILE", range_file)
    assert processes._picked_port_range() is None
    ports = processes.free_ports(3)
    assert len(set(ports)) == 3 and all(0 < p < 65_536 for p in ports)


def test_a_candidate_in_use_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        # The only candidate is taken: the pick falls back to the kernel instead of failing.
        monkeypatch.setattr(processes, "_picked_port_range", lambda: range(taken, taken + 1))
        (port,) = processes.free_ports(1)
    assert port != taken


def test_parallel_test_workers_pick_ports_from_disjoint_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    from kraft.cli import cluster_processes

    monkeypatch.delenv("KRAFT_PORT_RANGE", raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    slices = []
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        slices.append(cluster_processes._picked_port_range())
    if slices[0] is None:
        pytest.skip("the kernel's ephemeral range is unknown here")
    assert slices[1] is not None and not set(slices[0]) & set(slices[1])
    monkeypatch.setenv("KRAFT_PORT_RANGE", "40000-40009")
    assert cluster_processes._picked_port_range() == range(40000, 40010)
    assert set(cluster_processes.free_ports(3)) <= set(range(40000, 40010))
