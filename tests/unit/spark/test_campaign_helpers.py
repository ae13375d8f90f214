"""The pure parts of ``kraft sim campaign`` (``kraft.spark.campaign``), without Spark: planning the
units, flattening a run into a row, the summary, the report's exit status and the plots."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from kraft.sim.runner import run_seed
from kraft.spark.campaign import (
    CRASH_INVARIANT,
    RUN_COLUMN_NAMES,
    Unit,
    describe_seeds,
    expand_scenario_list,
    flatten_result,
    parse_voters,
    plan_units,
    render_markdown,
    report,
    row_dict,
    run_units,
    summarise_rows,
)


def test_parse_voters() -> None:
    assert parse_voters(None) == [None]
    assert parse_voters("3,5") == [3, 5]
    assert parse_voters("5,3,5") == [5, 3]
    for bad in ("0", "6", "3,x", ""):
        with pytest.raises(ValueError):
            parse_voters(bad)


def test_scenario_list_expands_groups_in_order_without_repeats() -> None:
    assert expand_scenario_list("steady,partition-rejoin") == ["steady", "partition-rejoin"]
    raft = expand_scenario_list("raft")
    assert raft[0] == "steady" and "controller-steady" not in raft
    assert expand_scenario_list("steady,raft") == raft
    assert expand_scenario_list("controller")[0].startswith("controller-")
    with pytest.raises(KeyError, match="unknown scenario 'nope'"):
        expand_scenario_list("steady,nope")


def test_describe_seeds() -> None:
    assert describe_seeds(list(range(1, 101))) == "1..100"
    assert describe_seeds([7]) == "7"
    assert describe_seeds([1, 5, 9]) == "1,5,9"
    assert describe_seeds(list(range(0, 40, 2))).endswith("(20 seeds)")


def _runs(bins: list[list[Unit]]) -> list[tuple[str, int | None, bool, int]]:
    return [(u.scenario, u.voters, u.pre_vote, s) for b in bins for u in b for s in u.seeds]


def test_plan_covers_every_run_once_in_few_balanced_bins() -> None:
    seeds = list(range(1, 1001))
    bins = plan_units(["steady", "partition-rejoin"], seeds, [3, 5], [True, False], 6)
    runs = _runs(bins)
    expected = {
        (s, v, p, seed)
        for s in ("steady", "partition-rejoin")
        for v in (3, 5)
        for p in (True, False)
        for seed in seeds
    }
    assert len(runs) == len(expected) == 8000 and set(runs) == expected
    assert len(bins) == 6
    units = [u for b in bins for u in b]
    assert 6 * 4 <= len(units) <= 6 * 4 + 8  # about units_per_partition per bin (+ cell remainders)
    for u in units:  # consecutive slices of the seed list
        assert list(u.seeds) == list(range(u.seeds[0], u.seeds[-1] + 1))
    # Balanced by the estimated cost (duration x nodes): partition-rejoin costs about twice steady.
    from kraft.spark.campaign import scenario_cost

    loads = [sum(scenario_cost(u.scenario, u.voters) * len(u.seeds) for u in b) for b in bins]
    assert max(loads) / min(loads) < 1.2
    assert plan_units(["steady", "partition-rejoin"], seeds, [3, 5], [True, False], 6) == bins


def test_plan_small_campaigns_and_more_cells_than_partitions() -> None:
    bins = plan_units(["steady"], [1, 2], [None], [True], 6)
    assert len(bins) == 2 and _runs(bins) == [("steady", None, True, 1), ("steady", None, True, 2)]
    cells = [f"s{i}" for i in range(20)]
    bins = plan_units(cells, [1, 2, 3], [None], [True], 4, cost=lambda s, v: 1.0)
    assert len(bins) == 4 and sorted(len(_runs([b])) for b in bins) == [15, 15, 15, 15]
    assert plan_units(["steady"], [], [None], [True], 4) == []
    with pytest.raises(ValueError):
        plan_units(["steady"], [1], [None], [True], 0)


def test_flatten_result_of_real_runs() -> None:
    result = run_seed("partition-rejoin", 3, pre_vote=False)
    row = flatten_result(result)
    assert tuple(row) == RUN_COLUMN_NAMES
    assert row["trace_hash"] == result["trace_hash"] and row["seed"] == 3 and row["pre_vote"] is False
    assert row["violations"] == 0 and row["first_violation_invariant"] is None
    assert row["first_leader_ms"] == result["time_to_first_leader_ms"]
    assert row["majority_epoch_increase"] == result["majority_epoch_increase"] > 0
    assert row["leader_deposed_on_rejoin"] is True
    assert row["controller_partition_elections"] is None
    controller = flatten_result(run_seed("controller-steady", 1))
    assert controller["controller_brokers"] >= 3 and controller["controller_activations"] >= 1
    assert controller["majority_epoch_increase"] is None


def test_a_run_that_raises_becomes_a_failing_row() -> None:
    [values] = list(run_units([Unit("no-such-scenario", 3, False, (9,))]))
    row = row_dict(values)
    assert row["violations"] == 1 and row["first_violation_invariant"] == CRASH_INVARIANT
    assert "no-such-scenario" in row["first_violation_detail"] and row["trace_hash"] == ""
    assert row["seed"] == 9 and row["voters"] == 3 and row["pre_vote"] is False


def _row(scenario: str, seed: int, pre_vote: bool = True, **figures: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(RUN_COLUMN_NAMES)
    row.update(
        scenario=scenario,
        voters=3,
        observers=0,
        pre_vote=pre_vote,
        seed=seed,
        trace_hash=f"{seed:032x}",
        violations=0,
        elections=1,
        prospective_rounds=1,
        leader_changes=0,
        max_epoch=1,
        first_leader_ms=1000 + seed,
        unavailable_ms=1000 + 10 * seed,
        events=5000,
        wall_s=0.2,
    )
    row.update(figures)
    return row


def hand_made_rows() -> list[dict[str, Any]]:
    """partition-rejoin seeds 1..100 both ways (no Pre-Vote: epochs rise, the leader is deposed) and
    one planted failure: seed 7 without Pre-Vote violated SingleLeader twice."""
    rows = []
    for seed in range(1, 101):
        rows.append(
            _row("partition-rejoin", seed, True, majority_epoch_increase=0, leader_deposed_on_rejoin=False)
        )
        rows.append(
            _row(
                "partition-rejoin",
                seed,
                False,
                elections=1 + seed % 20,
                max_epoch=1 + seed % 20,
                leader_changes=1,
                unavailable_ms=2000 + seed,
                majority_epoch_increase=seed % 20,
                leader_deposed_on_rejoin=seed % 20 > 0,
            )
        )
    failing = rows[13]  # seed 7, no Pre-Vote
    assert failing["seed"] == 7 and failing["pre_vote"] is False
    failing.update(
        violations=2,
        first_violation_invariant="SingleLeader",
        first_violation_detail="two leaders in epoch 4: 1 and 2",
        first_violation_step=1234,
        first_violation_at_ms=5678,
    )
    rows.append(_row("steady", 1, first_leader_ms=None))  # a run that never elected a leader
    return rows


def test_summary_groups_percentiles_and_prevote_comparison() -> None:
    summary = summarise_rows(hand_made_rows())
    assert summary["runs"] == 201 and summary["violations"] == 2
    keys = [(g["scenario"], g["voters"], g["pre_vote"]) for g in summary["groups"]]
    assert keys == [("partition-rejoin", 3, True), ("partition-rejoin", 3, False), ("steady", 3, True)]
    on, off, steady = summary["groups"]
    assert on["seeds"] == 100 and on["violations"] == 0 and off["failing_seeds"] == [7]
    assert off["unavailable_ms"] == {"mean": 2050.5, "p50": 2050, "p99": 2099, "max": 2100}
    assert on["election_latency_ms"] == {"p50": 1050, "p99": 1099, "max": 1100, "no_leader": 0}
    assert off["elections"]["max"] == 20 and off["seeds_leader_deposed"] == 95
    assert steady["election_latency_ms"]["no_leader"] == 1 and steady["election_latency_ms"]["p50"] is None
    [cmp] = summary["prevote_comparison"]
    assert cmp["scenario"] == "partition-rejoin" and cmp["seeds"] == 100
    assert cmp["pre_vote"]["seeds_leader_deposed"] == 0 and cmp["no_pre_vote"]["seeds_leader_deposed"] == 95
    assert cmp["seeds_more_elections_without"] == 95 and cmp["seeds_more_elections_with"] == 0
    [failure] = summary["failures"]
    assert failure["reproduce"] == "kraft sim run --scenario partition-rejoin --seed 7 --no-prevote"


def test_reproduce_names_voters_only_when_not_the_scenarios_own() -> None:
    rows = [
        _row("steady", 5, voters=5, violations=1, first_violation_invariant="X", first_violation_detail="d")
    ]
    [failure] = summarise_rows(rows)["failures"]
    assert failure["reproduce"] == "kraft sim run --scenario steady --seed 5 --voters 5"


def test_report_of_a_failing_row_set_prints_the_reproduce_command_and_exits_1(tmp_path: Path) -> None:
    out = io.StringIO()
    status = report(hand_made_rows(), tmp_path, out, {"scenarios": ["partition-rejoin"]}, plots=False)
    assert status == 1
    text = out.getvalue()
    assert (
        "- FAILED partition-rejoin seed 7 (voters 3, pre-vote off): SingleLeader at step 1234: "
        "two leaders in epoch 4: 1 and 2" in text
    )
    assert "reproduce: `kraft sim run --scenario partition-rejoin --seed 7 --no-prevote`" in text
    assert "Violations: **2**." in text
    assert (tmp_path / "summary.md").read_text() == text
    document = json.loads((tmp_path / "summary.json").read_text())
    assert document["violations"] == 2 and document["failures"][0]["seed"] == 7
    assert document["campaign"] == {"scenarios": ["partition-rejoin"]}


def test_report_of_a_clean_row_set_exits_0(tmp_path: Path) -> None:
    rows = [r for r in hand_made_rows() if not r["violations"]]
    out = io.StringIO()
    assert report(rows, tmp_path, out, plots=False) == 0
    assert "Violations: none." in out.getvalue() and "Failing seeds" not in out.getvalue()
    text = render_markdown(summarise_rows(rows))
    assert "## Pre-Vote vs no Pre-Vote" in text
    assert "| partition-rejoin | 3 | 99 | 1.0 / 10.525 |" in text  # seed 7 off was dropped


def test_plots_are_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = hand_made_rows()
    from kraft.spark.campaign import write_plots

    written = write_plots(rows, summarise_rows(rows), tmp_path)
    assert [p.name for p in written] == [
        "unavailability.png",
        "election_latency.png",
        "prevote_disruption.png",
    ]
    for p in written:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    only_on = [r for r in rows if r["pre_vote"]]
    assert [p.name for p in write_plots(only_on, summarise_rows(only_on), tmp_path / "on")] == [
        "unavailability.png",
        "election_latency.png",
    ]
