"""Local process management for ``kraft cluster`` and the process-level tests.

Starts ``kraft server-start CONFIG`` as a child process with its output in a log file, tells
whether a pid still belongs to one of our servers (pids are recycled: a stale ``cluster.json``
must never make us signal a stranger), stops processes gracefully (SIGTERM, wait, SIGKILL after a
deadline), and checks or picks loopback ports.

Everything here waits on conditions with deadlines; nothing sleeps a fixed time to "let things
settle".
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import kraft

# The directory holding the ``kraft`` package, so children import the same code as this process
# even when the package is not installed (PYTHONPATH=src).
_PACKAGE_ROOT = str(Path(kraft.__file__).resolve().parent.parent)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child ``kraft`` process: ours, with the package importable."""
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _PACKAGE_ROOT not in paths:
        paths.insert(0, _PACKAGE_ROOT)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONUNBUFFERED"] = "1"  # so server.log is readable while the node runs
    if extra:
        env.update(extra)
    return env


def kraft_command(*args: str) -> list[str]:
    """argv running ``kraft ARGS...`` with this interpreter."""
    return [sys.executable, "-m", "kraft.cli.main", *args]


def run_kraft(*args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """``kraft ARGS...`` run to completion, output captured as text (exit status not checked).

    Raises:
        subprocess.TimeoutExpired: it ran longer than ``timeout_s`` (it is killed).
    """
    return subprocess.run(
        kraft_command(*args),
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=timeout_s,
        check=False,
    )


def start_kraft(args: Sequence[str], log_path: Path) -> subprocess.Popen[bytes]:
    """Starts ``kraft ARGS...`` in its own session with stdout+stderr appended to ``log_path``.

    Its own session: a Ctrl-C in the operator's terminal reaches only ``kraft cluster up``, which
    then stops the nodes in order, instead of every node dying at once.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            kraft_command(*args),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=child_env(),
            start_new_session=True,
        )


def start_server(
    config_path: Path, log_path: Path, supervisor_lock: Path | None = None
) -> subprocess.Popen[bytes]:
    """``kraft server-start CONFIG`` (see ``start_kraft``); with ``supervisor_lock`` the node stops
    once nobody holds that lock (``kraft.cli.supervisor_lock``)."""
    args = ["server-start", str(config_path)]
    if supervisor_lock is not None:
        args += ["--supervisor-lock", str(supervisor_lock)]
    return start_kraft(args, log_path)


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists (zombies count as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # State is the field after the parenthesised command name; Z = zombie.
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (FileNotFoundError, IndexError):
        return True  # no /proc (not Linux): trust kill(0)


def process_cmdline(pid: int) -> list[str] | None:
    """The pid's argv from /proc, or None if unknown (gone, or no /proc)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def is_our_server(pid: int, config_path: Path) -> bool:
    """True if ``pid`` is alive and runs a kraft node with exactly this config file.

    Without /proc we cannot tell, and answer by liveness alone.
    """
    if not pid_alive(pid):
        return False
    argv = process_cmdline(pid)
    if argv is None:
        return not Path("/proc").is_dir()
    return str(config_path) in argv and any(a in ("server-start", "test-raft-server") for a in argv)


def wait_for_exit(
    pids: Iterable[int], deadline: float, children: dict[int, subprocess.Popen[bytes]]
) -> set[int]:
    """Waits until every pid is gone or ``deadline`` (monotonic) passes; returns those still alive."""
    remaining = set(pids)
    while remaining:
        for pid in list(remaining):
            child = children.get(pid)
            gone = child.poll() is not None if child is not None else not pid_alive(pid)
            if gone:
                remaining.discard(pid)
        if not remaining or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    return remaining


@dataclass(frozen=True, slots=True)
class StopReport:
    terminated: tuple[int, ...]  # exited after SIGTERM
    killed: tuple[int, ...]  # needed SIGKILL
    already_gone: tuple[int, ...]


def stop_processes(
    pids: Sequence[int],
    *,
    timeout_s: float = 10.0,
    children: dict[int, subprocess.Popen[bytes]] | None = None,
) -> StopReport:
    """SIGTERM every pid, wait up to ``timeout_s`` for all, then SIGKILL the rest and reap them."""
    children = children or {}
    signalled: list[int] = []
    gone: list[int] = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            signalled.append(pid)
        except ProcessLookupError:
            gone.append(pid)
    stubborn = wait_for_exit(signalled, time.monotonic() + timeout_s, children)
    for pid in stubborn:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    still = wait_for_exit(stubborn, time.monotonic() + 5.0, children)
    if still:
        raise OSError(errno.EBUSY, f"processes {sorted(still)} survived SIGKILL")
    for child in children.values():
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=0.1)  # reap, so no zombie outlives us
    return StopReport(
        terminated=tuple(p for p in signalled if p not in stubborn),
        killed=tuple(sorted(stubborn)),
        already_gone=tuple(gone),
    )


def port_in_use(host: str, port: int) -> bool:
    """True if something listens on (host, port).

    SO_REUSEADDR is set, as servers set it, so that connections of a previous run lingering in
    TIME_WAIT do not count as "in use".
    """
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


# Where Linux takes the local port of an outgoing connection (and of a bind to port 0).
_EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# The lowest port picked below that range.
_LOWEST_PICKED_PORT = 20_000


def _picked_port_range() -> range | None:
    """Ports below the kernel's ephemeral range, or None where that range is unknown or too low.

    Processes that pick ports at the same time (parallel test workers starting clusters) can pick
    the same free port and race for it between the pick and the server's bind. ``KRAFT_PORT_RANGE``
    (``LOW-HIGH``) narrows the picks; without it, a pytest-xdist worker (``PYTEST_XDIST_WORKER`` =
    ``gwN`` of ``PYTEST_XDIST_WORKER_COUNT``, inherited by the nodes it starts) takes the N-th slice,
    so no two workers ever pick the same port.
    """
    explicit = os.environ.get("KRAFT_PORT_RANGE")
    if explicit:
        lo_text, _, hi_text = explicit.partition("-")
        return range(int(lo_text), int(hi_text) + 1)
    try:
        low = int(_EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if low - _LOWEST_PICKED_PORT < 1_000:
        return None
    picked = range(_LOWEST_PICKED_PORT, low)
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if worker.startswith("gw") and worker[2:].isdigit() and count and count.isdigit() and int(count) > 1:
        size = len(picked) // int(count)
        start = picked.start + int(worker[2:]) % int(count) * size
        return range(start, start + size)
    return picked


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports the kernel considers free right now (all bound at once, then freed).

    They are picked below the kernel's ephemeral range when it is known: a port handed out from
    that range can be taken, between this call and the server's own bind, as the local end of any
    outgoing connection on the machine (the nodes' own connections to each other included), and
    the server then fails with "address in use". Elsewhere the kernel picks (a bind to port 0).
    """
    sockets: list[socket.socket] = []
    picked = _picked_port_range()
    candidates = random.sample(picked, min(len(picked), 100 * count)) if picked is not None else []
    try:
        while len(sockets) < count:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(s)
            while candidates:
                try:
                    s.bind((host, candidates.pop()))
                    break
                except OSError as e:
                    if e.errno not in (errno.EADDRINUSE, errno.EACCES):
                        raise
            else:
                s.bind((host, 0))  # none of the candidates was free: let the kernel pick
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a text file ('' if it does not exist)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            data = f.read().decode(errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(data.splitlines()[-lines:])
