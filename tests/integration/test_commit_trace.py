"""``kraft test-raft-server --trace-commit-path``: three real voters trace their commit path, and
``kraft.cli.commit_path`` joins the traces into stages that add up to the commit latency."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from local_cluster import LocalCluster

from kraft.cli.commit_path import STAGES, commit_path_stages

pytestmark = pytest.mark.slow


def test_traced_stages_add_up_to_the_leaders_commit_latency(
    local_cluster: Callable[..., LocalCluster], tmp_path: Path
) -> None:
    cluster = local_cluster(3)
    traces = {i: tmp_path / f"trace-{i}.jsonl" for i in cluster.ids}
    for i in cluster.ids:
        cluster.start(
            i,
            [
                "--throughput", "100", "--record-size", "100", "--duration-s", "6", "--json",
                "--override", "controller.quorum.append.linger.ms=0",
                "--trace-commit-path", str(traces[i]),
            ],
        )  # fmt: skip
    for proc in cluster.procs.values():
        assert proc.wait(timeout=60) == 0
    events = [json.loads(line) for path in traces.values() for line in path.read_text().splitlines()]
    # As the nodes stop one by one at the end, another may lead (and append) briefly.
    appends = Counter(e["node"] for e in events if e["event"] == "append")
    leader, _ = appends.most_common(1)[0]
    out = commit_path_stages(events, leader)
    assert out["commits"] >= 50, out  # ~100/s for the seconds after the election
    rows = {row["stage"]: row for row in out["stages"]}
    assert list(rows)[:-1] == list(STAGES)
    assert all(row["p50_ms"] >= 0 for row in rows.values())
    total = out["stages"][-1]["mean_ms"]
    assert sum(rows[s]["mean_ms"] for s in STAGES) == pytest.approx(total, rel=1e-6)
    # The follower's fsync sits on the path (the leader's runs while the data travels).
    assert rows[STAGES[0]]["p50_ms"] > 0 and rows[STAGES[4]]["p50_ms"] > 0
