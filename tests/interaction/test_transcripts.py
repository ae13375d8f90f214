"""Runs every transcript in testdata/ (etcd-style; see README.md for the commands)."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from raft_env import RaftEnv
from transcript import run_transcript

TESTDATA = Path(__file__).parent / "testdata"


@pytest.mark.parametrize("path", sorted(TESTDATA.glob("*.txt")), ids=lambda p: p.stem)
def test_transcript(path: Path, request: pytest.FixtureRequest) -> None:
    expected, actual = run_transcript(path, RaftEnv)
    if request.config.getoption("--rewrite"):
        path.write_text(actual)
        return
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"{path.name} (expected)",
                f"{path.name} (actual)",
            )
        )
        pytest.fail(f"{path.name} differs (rerun with --rewrite and review the diff):\n{diff}", pytrace=False)
