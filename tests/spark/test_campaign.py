"""``kraft sim campaign`` on the shared ``local[2]`` session: the same runs as ``kraft sim sweep``,
seed for seed; batched into a few tasks; the Parquet, summary and plot files; failing rows reported.

Seeds are chosen to stay fast on two busy cores: a ``steady`` run costs about 0.17 CPU-s, a
``partition-rejoin`` run about 0.4 CPU-s.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow.parquet as pq
import pytest

from kraft.cli.sim import main
from kraft.spark.campaign import (
    CRASH_INVARIANT,
    RUN_COLUMN_NAMES,
    RUN_COLUMNS,
    Unit,
    execute,
    flatten_result,
    report,
    write_runs,
)

# One worker runs every Spark test of a parallel run (`--dist loadgroup`): one SparkSession.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

STEADY_SEEDS = "1..20"  # x2 (Pre-Vote on and off): 40 runs (each is also swept again below)
REJOIN_SEEDS = "1..8"  # x2: 16 runs
PNG = b"\x89PNG\r\n\x1a\n"


class Campaign(NamedTuple):
    status: int
    printed: str
    out: Path


def _campaign(argv: list[str], out: Path) -> Campaign:
    printed = io.StringIO()
    status = main(["campaign", *argv, "--compare-prevote", "--out", str(out)], printed)
    return Campaign(status, printed.getvalue(), out)


@pytest.fixture(scope="module")
def campaigns(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Campaign]:
    root = tmp_path_factory.mktemp("campaign")
    return {
        "steady": _campaign(["--scenarios", "steady", "--seeds", STEADY_SEEDS], root / "steady"),
        "partition-rejoin": _campaign(
            ["--scenarios", "partition-rejoin", "--seeds", REJOIN_SEEDS], root / "rejoin"
        ),
    }


def _parquet_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(out / "runs.parquet").to_pylist()
    return rows


def _sweep(scenario: str, seeds: str, pre_vote: bool) -> list[dict[str, Any]]:
    printed = io.StringIO()
    argv = ["sweep", "--scenario", scenario, "--seeds", seeds, "--workers", "2", "--json"]
    assert main(argv + ([] if pre_vote else ["--no-prevote"]), printed) == 0
    runs: list[dict[str, Any]] = json.loads(printed.getvalue())["runs"]
    return runs


def test_campaign_gives_the_runs_of_kraft_sim_sweep_seed_for_seed(campaigns: dict[str, Campaign]) -> None:
    for scenario, seeds in (("steady", STEADY_SEEDS), ("partition-rejoin", REJOIN_SEEDS)):
        rows = {(r["pre_vote"], r["seed"]): r for r in _parquet_rows(campaigns[scenario].out)}
        first, last = (int(x) for x in seeds.split(".."))
        assert len(rows) == 2 * (last - first + 1)
        for pre_vote in (True, False):
            for swept in _sweep(scenario, seeds, pre_vote):
                row = rows.pop((pre_vote, swept["seed"]))
                expected = flatten_result(swept)
                assert row["trace_hash"] == swept["trace_hash"], (scenario, pre_vote, swept["seed"])
                differing = {k for k in RUN_COLUMN_NAMES if k != "wall_s" and row[k] != expected[k]}
                assert not differing, (scenario, pre_vote, swept["seed"], differing)
        assert not rows


def test_runs_are_batched_into_a_few_tasks(campaigns: dict[str, Campaign]) -> None:
    for c in campaigns.values():
        info = json.loads((c.out / "summary.json").read_text())["campaign"]
        assert info["default_parallelism"] == 2 and info["partitions_per_core"] == 3
        assert info["partitions"] == 6 and 1 <= info["tasks"] <= 6
        assert info["units"] >= info["partitions"]
    steady = json.loads((campaigns["steady"].out / "summary.json").read_text())["campaign"]
    assert steady["runs"] == 40 and steady["tasks"] * 6 <= steady["runs"]  # not a task per seed


def test_parquet_summary_and_plots_hold_the_campaign(campaigns: dict[str, Campaign]) -> None:
    for c in campaigns.values():
        assert c.status == 0
        table = pq.read_table(c.out / "runs.parquet")
        kinds = {"string": "string", "int": "int32", "long": "int64", "bool": "bool", "double": "double"}
        assert [(f.name, str(f.type), f.nullable) for f in table.schema] == [
            (name, kinds[kind], nullable) for name, kind, nullable in RUN_COLUMNS
        ]
        assert sum(r["violations"] for r in table.to_pylist()) == 0
        document = json.loads((c.out / "summary.json").read_text())
        assert document["violations"] == 0 and document["failures"] == []
        assert [(g["pre_vote"], g["seeds"], g["violations"]) for g in document["groups"]] == [
            (True, table.num_rows // 2, 0),
            (False, table.num_rows // 2, 0),
        ]
        assert sorted(document["plots"]) == [
            "election_latency.png",
            "prevote_disruption.png",
            "unavailability.png",
        ]
        for name in document["plots"]:
            assert (c.out / name).read_bytes()[:8] == PNG
        markdown = (c.out / "summary.md").read_text()
        assert markdown == c.printed
        assert "## Pre-Vote vs no Pre-Vote" in markdown and "Violations: none." in markdown
    rejoin = json.loads((campaigns["partition-rejoin"].out / "summary.json").read_text())
    for group in rejoin["groups"]:
        assert group["election_latency_ms"]["p50"] is not None and group["unavailable_ms"]["max"] >= 1000
    [cmp] = rejoin["prevote_comparison"]
    # KIP-996: with Pre-Vote a rejoining follower does not raise the majority's epoch nor depose its
    # leader; without it, it does.
    assert cmp["pre_vote"]["seeds_leader_deposed"] == 0 and cmp["pre_vote"]["seeds_majority_epoch_rose"] == 0
    assert cmp["no_pre_vote"]["seeds_leader_deposed"] == cmp["seeds"] == 8
    assert cmp["no_pre_vote"]["elections_mean"] > 5 * cmp["pre_vote"]["elections_mean"]


def test_a_planted_violation_is_reported_with_its_reproduce_command(
    spark: Any, campaigns: dict[str, Campaign], tmp_path: Path
) -> None:
    rows = _parquet_rows(campaigns["partition-rejoin"].out)
    [planted] = [r for r in rows if r["seed"] == 5 and not r["pre_vote"]]
    planted.update(
        violations=1,
        first_violation_invariant="SingleLeader",
        first_violation_detail="two leaders in epoch 3",
        first_violation_step=42,
        first_violation_at_ms=9000,
    )
    write_runs(spark, rows, tmp_path / "runs.parquet")
    printed = io.StringIO()
    assert report(rows, tmp_path, printed, {"scenarios": ["partition-rejoin"]}) == 1
    assert (
        "- FAILED partition-rejoin seed 5 (voters 3, pre-vote off): SingleLeader at step 42: "
        "two leaders in epoch 3\n"
        "  reproduce: `kraft sim run --scenario partition-rejoin --seed 5 --no-prevote`"
    ) in printed.getvalue()
    document = json.loads((tmp_path / "summary.json").read_text())
    assert document["violations"] == 1
    assert (
        document["failures"][0]["reproduce"]
        == "kraft sim run --scenario partition-rejoin --seed 5 --no-prevote"
    )
    [failing] = [r for r in _parquet_rows(tmp_path) if r["violations"]]
    assert failing["seed"] == 5 and failing["first_violation_invariant"] == "SingleLeader"


def test_a_seed_that_raises_on_an_executor_is_a_failing_row_not_a_failed_job(spark: Any) -> None:
    done = execute(spark, [[Unit("no-such-scenario", None, True, (1, 2))]], progress=False)
    assert [r["seed"] for r in done.rows] == [1, 2] and done.tasks == 1
    assert all(r["first_violation_invariant"] == CRASH_INVARIANT for r in done.rows)


def test_bad_arguments_exit_2(spark: Any, tmp_path: Path) -> None:
    for argv in (
        ["--scenarios", "nope", "--seeds", "1..2"],
        ["--scenarios", "steady", "--seeds", "1..2", "--voters", "9"],
    ):
        assert main(["campaign", *argv, "--out", str(tmp_path)], io.StringIO()) == 2
