"""Runs every transcript in testdata/ (etcd-style; see README.md for the commands)."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from cluster_env import ClusterEnv
from raft_env import RaftEnv
from transcript import Environment, run_transcript

TESTDATA = Path(__file__).parent / "testdata"
# testdata/*.txt drive raft cores (raft_env), testdata/cluster/*.txt whole nodes (cluster_env).
TRANSCRIPTS = sorted(TESTDATA.glob("*.txt")) + sorted((TESTDATA / "cluster").glob("*.txt"))


def _environment(path: Path) -> Environment:
    return ClusterEnv() if path.parent.name == "cluster" else RaftEnv()


@pytest.mark.parametrize(
    "path", TRANSCRIPTS, ids=lambda p: f"cluster/{p.stem}" if p.parent.name == "cluster" else p.stem
)
def test_transcript(path: Path, request: pytest.FixtureRequest) -> None:
    expected, actual = run_transcript(path, lambda: _environment(path))
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
