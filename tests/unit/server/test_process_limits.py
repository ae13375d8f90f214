"""``kraft server-start`` raises the soft open-file limit to the hard one, as the JVM does for Kafka."""

from __future__ import annotations

import subprocess
import sys

import pytest

resource = pytest.importorskip("resource")

PROBE = (
    "import logging, resource, sys; logging.basicConfig(level=logging.INFO, stream=sys.stdout);"
    "from kraft.server.process_limits import raise_open_file_limit;"
    "print('changed', raise_open_file_limit()); print('now', resource.getrlimit(resource.RLIMIT_NOFILE))"
)


def _run_with_soft_limit(soft: int) -> str:
    def lower() -> None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return subprocess.run(
        [sys.executable, "-c", PROBE],
        preexec_fn=lower,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_a_low_soft_limit_is_raised_to_the_hard_one() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip(f"the hard open-file limit ({hard}) leaves nothing to raise")
    out = _run_with_soft_limit(256)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    assert f"changed (256, {target})" in out
    assert f"now ({target}, {hard})" in out
    assert "raised the open-file limit from 256" in out


def test_a_soft_limit_at_the_hard_one_is_left_alone() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        pytest.skip("an unlimited hard limit: the soft one is raised to 1,048,576 instead")
    out = _run_with_soft_limit(hard)
    assert "changed None" in out and f"now ({hard}, {hard})" in out


@pytest.mark.parametrize(
    ("soft", "expected"),
    [(20_000, 15_000), (1024, 64), (2048, 1024), (1 << 20, (1 << 20) - (1 << 18))],
)
def test_the_default_segment_file_bound_leaves_the_rest_of_the_limit_to_the_process(
    monkeypatch: pytest.MonkeyPatch, soft: int, expected: int
) -> None:
    from kraft.server import process_limits

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (soft, soft))
    assert process_limits.default_max_open_segment_files() == expected
